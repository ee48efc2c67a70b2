"""``print_numbered`` gives the text ``print_module`` prints and the module parsing that text
gives back, line numbers included; a compile hands that module to the reports and the
simulator in place of parsing its own output, so the two must never differ."""

from __future__ import annotations

import dataclasses
import glob
import importlib.util
import os
from pathlib import Path

import pytest

from ptoc import ir
from ptoc.pto import ForOp, IfOp, parse, print_module
from ptoc.pto.printer import print_numbered
from oracle_data import ORACLE_ROOT

DATA = os.path.join(os.path.dirname(__file__), "data")
TEXTS = sorted(glob.glob(os.path.join(DATA, "*.pto"))) + \
    sorted(glob.glob(str(ORACLE_ROOT / "dumps/*/kernel.pto")))
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def lines(module) -> list:
    """Every line-carrying field of a module, in order (equality ignores them)."""
    out = [("module", module.filename)]
    for kernel in module.kernels:
        out.append(("kernel", kernel.name, kernel.line))
        out.extend((type(op).__name__, op.line, getattr(op, "end_line", None))
                   for op in kernel.walk())
    return out


def unnumbered(module):
    """The module with every line set to 0, as codegen builds it."""
    def op(o):
        if isinstance(o, ForOp):
            return dataclasses.replace(o, body=tuple(map(op, o.body)), line=0, end_line=0)
        if isinstance(o, IfOp):
            return dataclasses.replace(o, then_body=tuple(map(op, o.then_body)),
                                       else_body=tuple(map(op, o.else_body)), line=0,
                                       end_line=0)
        return dataclasses.replace(o, line=0)
    return dataclasses.replace(module, kernels=tuple(
        dataclasses.replace(k, body=tuple(map(op, k.body)), line=0) for k in module.kernels))


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: p.split("/")[-2] + "/" + p.split("/")[-1])
def test_numbered_module_is_the_parsed_text(path):
    parsed = parse(Path(path).read_text(encoding="utf-8"), path)
    bare = unnumbered(parsed)
    assert lines(bare) != lines(parsed)
    text, numbered = print_numbered(bare, path)
    assert text == print_module(parsed)
    assert numbered == parse(text, path)
    assert lines(numbered) == lines(parse(text, path))


def example_program(stem: str, name: str):
    spec = importlib.util.spec_from_file_location(f"example_{stem}", EXAMPLES / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


@pytest.mark.parametrize("stem, name, options", [
    ("04_softmax", "Softmax", {}),
    ("06_mixed_kernel", "MixedMatmulBias", {}),       # a core group: AIC and AIV kernels
    ("03_dbc_matmul", "Grid", {"enable_pypto_l0c_double_buffer": True, "check_dbc": False}),
    ("03_dbc_matmul", "Grid", {"memory_planner": "PTOAS"}),
])
def test_compiled_modules_are_the_parsed_files(tmp_path, stem, name, options):
    compiled = ir.compile(example_program(stem, name), tmp_path, dump_passes=False, **options)
    for kernel, text in compiled.pto_text.items():
        assert (tmp_path / "pto" / f"{kernel}.pto").read_text(encoding="utf-8") == text
        parsed = parse(text, f"{kernel}.pto")
        assert compiled.pto_module(kernel) == parsed
        assert lines(compiled.pto_module(kernel)) == lines(parsed)
