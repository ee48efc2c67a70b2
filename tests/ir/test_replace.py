"""ptoc.ir.nodes.replace: dataclasses.replace's result for every IR node and type, faster."""

from __future__ import annotations

import dataclasses

import pytest

from ir_samples import make_matmul_program
from ptoc.ir.nodes import Call, Node, Op, Submit, replace
from ptoc.ir.types import ScalarType, Type
from ptoc.dtypes import DataType


def _reachable(root):
    """Every IR node and type inside ``root`` (fields, tuples, kwarg pairs), once each."""
    seen, todo = {}, [root]
    while todo:
        x = todo.pop()
        if isinstance(x, (Node, Type)) and dataclasses.is_dataclass(x):
            if id(x) in seen:
                continue
            seen[id(x)] = x
            todo.extend(getattr(x, f.name) for f in dataclasses.fields(x))
        elif isinstance(x, (tuple, list)):
            todo.extend(x)
    return list(seen.values())


def _state(x):
    return type(x), {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}, dict(vars(x))


@pytest.mark.parametrize("with_memref", [False, True])
def test_replace_equals_dataclasses_replace_on_every_node(with_memref):
    nodes = _reachable(make_matmul_program(with_memref=with_memref))
    assert len({type(n) for n in nodes}) >= 15
    for node in nodes:
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            ours, theirs = replace(node, **{f.name: value}), dataclasses.replace(node, **{f.name: value})
            assert ours is not node
            assert _state(ours) == _state(theirs)
        assert _state(replace(node)) == _state(dataclasses.replace(node))


def test_replace_runs_post_init_and_keeps_errors():
    call = Call("tile.add", (), (), ScalarType(DataType.FP32))
    made = replace(call, op="tile.mul", kwargs=(("k", 1),))
    assert type(made.op) is Op and made.op == "tile.mul" and made.kwarg("k") == 1
    assert replace(Submit("k", (), (), ScalarType(DataType.FP32)), is_function=False).is_function
    with pytest.raises(TypeError):
        replace(call, opp="tile.mul")         # not a field: dataclasses.replace's error


def test_replace_other_dataclasses_unchanged():
    @dataclasses.dataclass(frozen=True)
    class Plain:
        a: int
        b: int = dataclasses.field(default=0, init=False)

    assert replace(Plain(1), a=2) == Plain(2)
