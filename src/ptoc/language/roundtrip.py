"""The round-trip check every pass output must survive: print -> parse -> structural equality."""

from __future__ import annotations

from ptoc.errors import VerificationError
from ptoc.ir.nodes import Program
from ptoc.language.program import parse_program


def roundtrip(program: Program, *, label: str = "program") -> Program:
    """Print ``program``, parse the text back and require a structurally equal result.

    Returns the re-parsed program. Raises VerificationError naming ``label`` (e.g. the
    pass that produced the program) with the first difference when the text does not
    reproduce the IR.
    """
    from ptoc.ir.equality import assert_structural_equal

    text = program.as_python()
    reparsed = parse_program(text, filename=f"<printed {label}>")
    try:
        assert_structural_equal(program, reparsed)
    except AssertionError as err:
        raise VerificationError(f"printed IR of {label} does not parse back to the same "
                                f"program: {err}",
                                hint="the printer and parser disagree; this is a ptoc bug") from None
    return reparsed
