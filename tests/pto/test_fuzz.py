"""Robustness: mutated PTO text either loads or raises PtocError, never a raw Python exception."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ptoc.errors import PtocError
from ptoc.pto import load, parse, print_module

DATA = os.path.join(os.path.dirname(__file__), "data")
with open(os.path.join(DATA, "l3_row_softmax.pto"), encoding="utf-8") as _f:
    SOFTMAX = _f.read()
TOKENS = ["%", "@", "!", "#", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", "=", "->", "?",
          "0", "-1", "0x1F", "1.5", '"s"', "index", "f32", "pto.tadd", "scf.for", "loc", "ins",
          "outs", "<PIPE_V>", "<EVENT_ID9>", "%t", "%c0", "\n", " ", "addr", "valid_row"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(SOFTMAX) - 1), st.integers(0, 12),
                          st.sampled_from(TOKENS)), min_size=1, max_size=4))
def test_mutations_never_escape_as_raw_exceptions(edits):
    text = SOFTMAX
    for pos, cut, insert in edits:
        pos = min(pos, len(text))
        text = text[:pos] + insert + text[pos + cut:]
    try:
        module = load(text)
    except PtocError as err:
        assert err.loc is None or err.loc.line >= 0
        return
    assert parse(print_module(module)) == module


def test_integer_literals():
    text = ("module {\n  func.func @f() {\n  %a = arith.constant 010 : index\n"
            "  %b = arith.constant 0x10 : index\n  %c = arith.constant -0x10 : i64\n  return\n  }\n}\n")
    body = parse(text).kernel().body
    assert [op.attr("value") for op in body] == [10, 16, -16]
