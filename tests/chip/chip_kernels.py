"""Small hand-written kernels and task builders for the chip tests."""

from __future__ import annotations

from ptoc.pto import parse
from ptoc.sim.examples import Writer
from ptoc.sim.task import Task

R, C = 16, 64


def add_kernel(name: str = "add", *, scale_loop: int = 1) -> object:
    """z = x + y on UB (R x C fp32): x from arg0, y from arg1, z stored to arg2; the add is
    repeated ``scale_loop`` times (a longer vector phase)."""
    w = Writer([("%arg0", "f32"), ("%arg1", "f32"), ("%arg2", "f32")])
    views = [w.view(f"v{i}", f"%arg{i}", "f32", R, C) for i in range(3)]
    nb = R * C * 4
    x, y, z = (w.alloc(n, "vec", "f32", R, C, i * nb) for i, n in enumerate("xyz"))
    w.op("pto.tload", [w.window(views[0], w.idx(0), w.idx(0), R, C)], [w.t(x)])
    w.op("pto.tload", [w.window(views[1], w.idx(0), w.idx(0), R, C)], [w.t(y)])
    w.sync("set_flag", "MTE2", "V", 0)
    w.sync("wait_flag", "MTE2", "V", 0)
    for _ in range(scale_loop):
        w.op("pto.tadd", [w.t(x), w.t(y)], [w.t(z)])
    w.sync("set_flag", "V", "MTE3", 0)
    w.sync("wait_flag", "V", "MTE3", 0)
    w.op("pto.tstore", [w.t(z)], [w.window(views[2], w.idx(0), w.idx(0), R, C)])
    return parse(w.render(name), filename=f"{name}.pto")


def add_task(index: int, module, x, y, z, *, deps=(), launch=None, block=None) -> Task:
    """z = x + y as task ``index`` (x, y read; z written)."""
    return Task(index, module.kernels[0].name, module, (x, y, z), (x, y), (z,), tuple(deps),
                params=("x", "y", "z"), launch=launch, block=block)
