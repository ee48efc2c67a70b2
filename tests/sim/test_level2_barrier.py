"""A Level-2 kernel whose only sync is a user ``pto.barrier`` still gets flags inserted."""

from ptoc.pto import parse, print_module
from ptoc.pto.insert_sync import strip_sync
from ptoc.pto.model import SyncOp
from ptoc.sim import simulate
from ptoc.sim.examples import dbuf_matmul
from ptoc.sim.inputs import random_inputs


def test_user_barrier_alone_is_still_level_two():
    level2 = print_module(strip_sync(parse(dbuf_matmul())))
    text = level2.replace("  return\n", "  pto.barrier <PIPE_V>\n  return\n", 1)
    module = parse(text)
    assert any(isinstance(op, SyncOp) for op in module.kernels[0].walk())
    result = simulate(module, random_inputs(module.kernels[0], 0))
    assert result.sync_level == 2 and result.races == [] and not result.serial
    assert any("insert_sync" in note.lower() or "level-2" in note.lower() for note in result.notes)
