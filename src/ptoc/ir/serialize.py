"""``ir.serialize`` / ``ir.deserialize`` (PyPTO's names): IR to bytes and back.

The bytes are the printed DSL text under a one-line header, so they are readable, stable
across ptoc versions that parse the same DSL, and loading them never executes code (PyPTO
uses MessagePack; the contract that matters — ``deserialize(serialize(x))`` is structurally
equal to ``x`` — is the printer/parser round trip ptoc already guarantees).
"""

from __future__ import annotations

import os

from ptoc.errors import ParseError
from ptoc.ir.nodes import Function, Program

HEADER = b"# ptoc-ir 1\n"


def serialize(node: Program | Function) -> bytes:
    """A program or function as bytes (see the module docstring)."""
    from ptoc.ir.printer import print_function, print_program

    if isinstance(node, Program):
        return HEADER + print_program(node).encode()
    if isinstance(node, Function):
        return HEADER + b"import ptoc.language as pl\n\n" + print_function(node).encode()
    raise ParseError(f"ir.serialize takes an ir.Program or ir.Function, got "
                     f"{type(node).__name__}", hint="serialize the program that holds it")


def deserialize(data: bytes) -> Program | Function:
    """The program or function ``serialize`` wrote."""
    if not isinstance(data, (bytes, bytearray)) or not data.startswith(HEADER):
        raise ParseError("ir.deserialize: these bytes were not written by ir.serialize",
                         hint="pass the bytes ir.serialize returned (or a file it wrote)")
    from ptoc.language.program import parse

    return parse(bytes(data[len(HEADER):]).decode(), "<ir.deserialize>")


def serialize_to_file(node: Program | Function, path: str | os.PathLike) -> None:
    from ptoc.files import write_bytes

    write_bytes(path, serialize(node))


def deserialize_from_file(path: str | os.PathLike) -> Program | Function:
    with open(path, "rb") as handle:
        return deserialize(handle.read())
