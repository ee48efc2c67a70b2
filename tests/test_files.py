"""ptoc.files: the indented JSON the compile's reports are written with is json's own text."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings, strategies as st

from ptoc.files import indented_json, write_json

_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(),
                     st.floats(allow_nan=True, allow_infinity=True))
_plain = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(st.text(max_size=5), inner, max_size=4)), max_leaves=25)


@settings(max_examples=200, deadline=None)
@given(_plain, st.integers(0, 4))
def test_indented_json_is_json_dumps_text(data, indent):
    assert indented_json(data, indent) == json.dumps(data, indent=indent)


def test_values_json_treats_specially_go_to_json_itself():
    class Name(str):
        pass

    for data in ({1: "int key"}, {"x": Name("sub")}, [True, 2 ** 80, -0.0, math.inf],
                 {"nested": [{"deep": (1, None)}]}):
        assert indented_json(data, 2) == json.dumps(data, indent=2)


def test_write_json_writes_the_indented_text(tmp_path):
    data = {"version": 1, "counts": {"a": 2}, "decisions": [{"m": 16, "ms": 0.5}]}
    path = write_json(tmp_path / "r.json", data, indent=2)
    assert path.read_text() == json.dumps(data, indent=2) + "\n"
