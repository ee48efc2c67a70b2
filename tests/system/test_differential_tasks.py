"""Differential test: random task graphs agree with numpy, and races are reported exactly
when the graph leaves a conflicting pair of tasks unordered.

A program is an orchestration function over [64, 32] tensors that runs a random list of
steps: a loop over 16-row blocks (bound static or ``pl.min(pl.tensor.read(cfg, [j]), 4)``,
``pl.range`` or ``pl.parallel``) launching an elementwise, row-reduction, matmul, scale
(by a constant or a scalar an ``if``/``else`` yields) or while-loop kernel on slices, plain
calls or ``pl.submit`` with a ``pl.array`` of ``pl.TASK_ID``; an ``if``/``else`` on a read
value whose arms run different loops; an inline ``pl.at`` region named ``as tid``; a
``pl.spmd`` launch whose blocks write disjoint rows; an in-place accumulation
(``pl.InOut``) by ``pl.submit``; any of those inside ``pl.manual_scope``. Each step writes
a fresh tensor (a ``pl.Out`` parameter or a ``pl.create_tensor``) or, in place, an older
one. ``deps=[...]`` name the earlier tasks the runtime does not order by itself (write
after read, write after write, producers in a manual scope); a *racy* program drops some.

The golden runs the same steps with numpy and builds the same task graph the device
runtime infers (a read waits for the latest overlapping writers; stated deps; nothing in a
manual scope), then finds the unordered conflicting pairs. Required, in order and on the
chip: outputs equal to the golden (integer-valued data: exact), on the chip each task's
dependencies equal to the model's, and races reported iff the model has one.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir
from ptoc.passes import VerificationLevel
from ptoc.passes.context import PassContext
from ptoc.runtime import RunConfig

R, C, T = 64, 32, 16
NB = R // T
EW = {"add": np.add, "sub": np.subtract, "maximum": np.maximum, "minimum": np.minimum}
T16 = f"pl.Tensor[[{T}, {C}], pl.FP32]"
TR = f"pl.Tensor[[{R}, {C}], pl.FP32]"
KERNELS = {
    **{f"ew_{op}": f"""
    @pl.function(type=pl.FunctionType.InCore)
    def ew_{op}(self, x: {T16}, y: {T16}, z: pl.Out[{T16}]) -> {T16}:
        z[:] = pl.{op}(x, y)
        return z
""" for op in EW},
    "scale": f"""
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, x: {T16}, s: pl.Scalar[pl.FP32], z: pl.Out[{T16}]) -> {T16}:
        z[:] = pl.mul(x, s)
        return z
""",
    "rowred": f"""
    @pl.function(type=pl.FunctionType.InCore)
    def rowred(self, x: {T16}, z: pl.Out[{T16}]) -> {T16}:
        z[:] = pl.row_expand_sub(x, pl.row_max(x))
        return z
""",
    "mm": f"""
    @pl.function(type=pl.FunctionType.InCore)
    def mm(self, x: {T16}, w: pl.Tensor[[{C}, {C}], pl.FP32], z: pl.Out[{T16}]) -> {T16}:
        z[:] = pl.matmul(x, w, out_dtype=pl.FP32)
        return z
""",
    "wloop": f"""
    @pl.function(type=pl.FunctionType.InCore)
    def wloop(self, x: {T16}, n: pl.Scalar[pl.INT32], z: pl.Out[{T16}]) -> {T16}:
        t = pl.load(x, [0, 0], [{T}, {C}])
        acc = t
        k = 0
        while k < n:
            acc = pl.add(acc, t)
            k = k + 1
        z = pl.store(acc, [0, 0], z)
        return z
""",
    "acc": f"""
    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, x: {TR}, z: pl.InOut[{TR}]) -> {TR}:
        z[:] = pl.add(z, x)
        return z
""",
    "blk": f"""
    @pl.function(type=pl.FunctionType.InCore)
    def blk(self, x: {TR}, z: pl.Out[{TR}]) -> {TR}:
        b = pl.tile.get_block_idx()
        n = pl.tile.get_block_num()
        for r in pl.range(b, {NB}, n):
            t = pl.load(x, [r * {T}, 0], [{T}, {C}])
            z = pl.store(pl.add(t, t), [r * {T}, 0], z)
        return z
""",
}
ONE_SOURCE = {"scale", "rowred", "mm", "wloop"}


@dataclass
class Step:
    """One statement of the orchestration: ``kind`` loop / branch / at / spmd / inplace."""

    kind: str
    idx: int
    dst: str
    srcs: tuple = ()
    kernel: str = ""
    bound: tuple = ("static", NB)      # ("static", n) or ("read", j)
    loop: str = "range"
    scalar: tuple = ()                 # scale: ("const", v) / ("branch", j, v1, v2); wloop: j
    submit: bool = False               # loop launches by pl.submit into a TASK_ID array
    deps: tuple = ()                   # step indices whose task ids this step waits on
    manual: bool = False               # inside pl.manual_scope()
    arms: tuple = ()                   # branch: (j, then Step, else Step)
    ops: tuple = ()                    # at: ("op", lhs, rhs) over x0, x1, ...
    blocks: int = 1
    named: bool = field(default=False)
    no_dep: bool = False               # loop: pl.no_dep on the first source (untracked read)


# ---------------------------------------------------------------- generation


@st.composite
def programs(draw):
    outs: list[str] = []
    temps: list[str] = []
    steps: list[Step] = []
    # per buffer: the steps that wrote / read it (for choosing deps=)
    writers: dict[str, list[int]] = {"a": [], "b": []}
    readers: dict[str, list[int]] = {"a": [], "b": []}
    racy = draw(st.booleans())

    def fresh(last):
        if last or draw(st.booleans()):
            name = f"o{len(outs)}"
            outs.append(name)
        else:
            name = f"t{len(temps)}"
            temps.append(name)
        writers[name], readers[name] = [], []
        return name

    def loop_step(idx, srcs_pool, dst):
        kernel = draw(st.sampled_from(sorted([f"ew_{op}" for op in EW]) + sorted(ONE_SOURCE)))
        inputs = ["a", "b"] if kernel == "mm" else srcs_pool   # keep matmul values small
        nsrc = 1 if kernel in ONE_SOURCE else 2
        srcs = tuple(draw(st.sampled_from(inputs)) for _ in range(nsrc))
        bound = draw(st.sampled_from([("static", NB), ("static", draw(st.integers(1, NB))),
                                      ("read", draw(st.integers(0, 3)))]))
        scalar = ()
        if kernel == "scale":
            v = draw(st.sampled_from((2.0, -1.0, 0.5)))
            scalar = draw(st.sampled_from([("const", v), ("branch", draw(st.integers(0, 3)), v,
                                                          -v)]))
        elif kernel == "wloop":
            scalar = (draw(st.integers(0, 3)),)
        return Step("loop", idx, dst, srcs, kernel, bound,
                    draw(st.sampled_from(("range", "parallel"))), scalar,
                    no_dep=racy and draw(st.booleans()))

    n = draw(st.integers(1, 5))
    for idx in range(n):
        last = idx == n - 1
        pool = ["a", "b"] + [s.dst for s in steps if s.kind != "inplace"]
        kind = draw(st.sampled_from(("loop", "loop", "branch", "at", "spmd", "inplace")))
        targets = [name for name in outs + temps]
        if kind == "inplace" and (last or not targets):   # the last step makes an output
            kind = "loop"
        if kind == "inplace":
            dst = draw(st.sampled_from(targets))
            src = draw(st.sampled_from([p for p in pool if p != dst]))
            step = Step("inplace", idx, dst, (src,), "acc", named=True)
        else:
            dst = fresh(last)
            if kind == "loop":
                step = loop_step(idx, pool, dst)
                step.submit = draw(st.booleans())
                step.named = step.submit
            elif kind == "branch":
                j = draw(st.integers(0, 3))
                step = Step("branch", idx, dst, arms=(j, loop_step(idx, pool, dst),
                                                      loop_step(idx, pool, dst)))
            elif kind == "at":
                srcs = tuple(draw(st.lists(st.sampled_from(pool), min_size=1, max_size=2)))
                names = [f"x{i}" for i in range(len(srcs))]
                ops = []
                for k in range(draw(st.integers(1, 3))):
                    ops.append((draw(st.sampled_from(sorted(EW))), draw(st.sampled_from(names)),
                                draw(st.sampled_from(names))))
                    names.append(f"y{k}")
                step = Step("at", idx, dst, srcs, ops=tuple(ops), named=True)
            else:
                step = Step("spmd", idx, dst, (draw(st.sampled_from(pool)),), "blk",
                            blocks=draw(st.integers(1, NB)), named=draw(st.booleans()))
        if step.kind in ("loop", "inplace") and draw(st.integers(0, 4)) == 0:
            step.manual = True
            step.submit = step.named = True
        # the edges the runtime does not infer, by the earlier named steps that need them
        reads = set(step_reads(step))
        need = set()
        for buf in reads:
            need.update(w for w in writers[buf] if step.manual or steps[w].manual)
        for w in (step.dst,):
            need.update(readers[w])
            if step.kind != "inplace" or step.manual:
                need.update(writers[w])
        need.discard(idx)
        named = sorted(s for s in need if steps[s].named)
        if step.kind == "branch" or step.kind == "loop" and not step.submit:
            named = []                     # a plain call names no task and takes no deps=
        if racy and named:
            named = draw(st.lists(st.sampled_from(named), unique=True, max_size=len(named) - 1))
        step.deps = tuple(sorted(named))
        for buf in reads:
            readers[buf].append(idx)
        writers[step.dst].append(idx)
        steps.append(step)
    return steps, outs, temps


def step_reads(step: Step) -> list[str]:
    if step.kind == "branch":
        return list(step.arms[1].srcs) + list(step.arms[2].srcs)
    if step.kind == "inplace":
        return list(step.srcs) + [step.dst]
    return list(step.srcs)


# ---------------------------------------------------------------- rendering


def _deps(step: Step, steps) -> str:
    if not step.deps:
        return ""
    names = [f"tids{d}" if steps[d].kind == "loop" else f"tid{d}" for d in step.deps]
    return f", deps=[{', '.join(names)}]"


def _loop_lines(step: Step, steps, idx) -> list[str]:
    lines = []
    k = step.kernel
    if step.bound[0] == "read":
        lines.append(f"n{idx} = pl.min(pl.tensor.read(cfg, [{step.bound[1]}]), {NB})")
        count = f"n{idx}"
    else:
        count = str(step.bound[1])
    extra = []
    if k == "scale":
        if step.scalar[0] == "const":
            extra = [repr(step.scalar[1])]
        else:
            _, j, v1, v2 = step.scalar
            lines += [f"f{idx} = pl.tensor.read(cfg, [{j}])", f"if f{idx} > 0:",
                      f"    s{idx} = pl.yield_({v1!r})", "else:", f"    s{idx} = pl.yield_({v2!r})"]
            extra = [f"s{idx}"]
    elif k == "wloop":
        lines.append(f"w{idx} = pl.tensor.read(cfg, [{step.scalar[0]}])")
        extra = [f"w{idx}"]
    if step.submit:
        lines.append(f"tids{idx} = pl.array.create({NB}, pl.TASK_ID)")
    lines.append(f"for i in pl.{step.loop}({count}):")
    args = []
    for n, src in enumerate(step.srcs):
        lines.append(f"    v{n} = pl.slice({src}, [{T}, {C}], [i * {T}, 0])")
        args.append("pl.no_dep(v0)" if n == 0 and step.no_dep else f"v{n}")
    if k == "mm":
        args.append("w")
    args += extra
    lines.append(f"    vd = pl.slice({step.dst}, [{T}, {C}], [i * {T}, 0])")
    args.append("vd")
    if step.submit:
        lines += [f"    vd, tid = pl.submit(self.{k}, {', '.join(args)}{_deps(step, steps)})",
                  f"    tids{idx}[i] = tid"]
    else:
        lines.append(f"    vd = self.{k}({', '.join(args)})")
    return lines


def _step_lines(step: Step, steps) -> list[str]:
    idx = step.idx
    if step.kind == "loop":
        lines = _loop_lines(step, steps, idx)
    elif step.kind == "branch":
        j, then, other = step.arms
        lines = [f"c{idx} = pl.tensor.read(cfg, [{j}])", f"if c{idx} > 0:"]
        lines += ["    " + line for line in _loop_lines(then, steps, idx)]
        lines.append("else:")
        lines += ["    " + line for line in _loop_lines(other, steps, idx + 100)]
    elif step.kind == "at":
        lines = [f"with pl.at(level=pl.Level.CORE_GROUP{_deps(step, steps)}) as tid{idx}:"]
        for n, src in enumerate(step.srcs):
            lines.append(f"    x{n} = pl.load({src}, [0, 0], [{R}, {C}])")
        for k, (op, lhs, rhs) in enumerate(step.ops):
            lines.append(f"    y{k} = pl.{op}({lhs}, {rhs})")
        lines.append(f"    pl.store(y{len(step.ops) - 1}, [0, 0], {step.dst})")
    elif step.kind == "spmd":
        head = f"with pl.spmd({step.blocks}{_deps(step, steps)})"
        lines = [head + (f" as tid{idx}:" if step.named or step.deps else ":"),
                 f"    {step.dst} = self.blk({step.srcs[0]}, {step.dst})"]
    else:
        lines = [f"{step.dst}, tid{idx} = pl.submit(self.acc, {step.srcs[0]}, {step.dst}"
                 f"{_deps(step, steps)})"]
    if step.manual:
        lines = ["with pl.manual_scope():"] + ["    " + line for line in lines]
    return lines


def render(steps, outs, temps) -> str:
    used = set()
    for s in steps:
        for part in (s.arms[1:] if s.kind == "branch" else (s,)):
            used.add(part.kernel)
    used.discard("")
    body = [f"{t} = pl.create_tensor([{R}, {C}], dtype=pl.FP32, init_value=0.0)" for t in temps]
    for s in steps:
        body += _step_lines(s, steps)
    ret = ", ".join(outs)
    body.append(f"return {ret}")
    rtype = TR if len(outs) == 1 else f"tuple[{', '.join([TR] * len(outs))}]"
    params = ", ".join([f"a: {TR}", f"b: {TR}", f"w: pl.Tensor[[{C}, {C}], pl.FP32]",
                        "cfg: pl.Tensor[[4], pl.INT32]"] + [f"{o}: pl.Out[{TR}]" for o in outs])
    text = "".join(KERNELS[k] for k in sorted(used))
    return ("import ptoc.language as pl\n\n@pl.program\nclass Tasks:" + text +
            "\n    @pl.function(type=pl.FunctionType.Orchestration)\n"
            f"    def main(self, {params}) -> {rtype}:\n" +
            "".join(f"        {line}\n" for line in body))


# ---------------------------------------------------------------- golden and task graph


@dataclass
class ModelTask:
    reads: list            # actual accesses: (buffer, lo, hi) rows
    writes: list
    lookups: list          # regions that wait for their latest writers
    produces: list         # regions later readers wait for
    deps: set
    launch: int


class Model:
    """Runs the steps on numpy arrays and records the task graph as the runtime infers it."""

    def __init__(self, steps, bufs, cfg):
        self.steps, self.bufs, self.cfg = steps, bufs, cfg
        self.tasks: list[ModelTask] = []
        self.named: dict[int, set] = {}     # step -> the task indices its task id(s) name
        self.launches = 0

    def run(self):
        for step in self.steps:
            self.step(step)
        return self

    def launch(self, step, reads, writes, lookups, produces, launch=None):
        deps = set()
        for d in step.deps:
            deps |= self.named.get(d, set())
        if step.manual:
            lookups, produces = [], []
        task = ModelTask(reads, writes, lookups, produces, deps,
                         self.launches if launch is None else launch)
        if launch is None:
            self.launches += 1
        self.tasks.append(task)
        return len(self.tasks) - 1

    def inferred(self):
        """Each task's dependencies: stated ones and, per lookup region, the earlier
        producers still overlapping it (a later producer that covers one hides it)."""
        live: list[tuple[int, tuple]] = []
        out = []
        for i, t in enumerate(self.tasks):
            deps = set(t.deps)
            for (buf, lo, hi) in t.lookups:
                deps.update(w for w, (b, l2, h2) in live if b == buf and l2 < hi and lo < h2
                            and self.tasks[w].launch != t.launch)
            for region in t.produces:
                buf, lo, hi = region
                live = [(w, r) for w, r in live if not (
                    r[0] == buf and lo <= r[1] and r[2] <= hi and self.tasks[w].launch != t.launch)]
                live.append((i, region))
            deps.discard(i)
            out.append(tuple(sorted(deps)))
        return out

    def racy(self) -> bool:
        deps = self.inferred()
        anc = []
        for i, ds in enumerate(deps):
            bits = 0
            for d in ds:
                bits |= anc[d] | (1 << d)
            anc.append(bits)
        for j, tj in enumerate(self.tasks):
            for i in range(j):
                if anc[j] >> i & 1:
                    continue
                ti = self.tasks[i]
                if _conflict(ti, tj):
                    return True
        return False

    def step(self, step: Step):
        if step.kind == "loop":
            self.loop(step)
        elif step.kind == "branch":
            j, then, other = step.arms
            arm = then if self.cfg[j] > 0 else other
            self.loop(arm)
        elif step.kind == "at":
            env = {f"x{n}": self.bufs[s].copy() for n, s in enumerate(step.srcs)}
            for k, (op, lhs, rhs) in enumerate(step.ops):
                env[f"y{k}"] = EW[op](env[lhs], env[rhs])
            self.bufs[step.dst][:] = env[f"y{len(step.ops) - 1}"]
            whole = [(s, 0, R) for s in step.srcs]
            i = self.launch(step, whole, [(step.dst, 0, R)], whole, [(step.dst, 0, R)])
            self.named[step.idx] = {i}
        elif step.kind == "spmd":
            src, dst = step.srcs[0], step.dst
            launch = self.launches
            self.launches += 1
            ids = set()
            for blk in range(step.blocks):
                rows = range(blk, NB, step.blocks)
                for r in rows:
                    self.bufs[dst][r * T:(r + 1) * T] = 2 * self.bufs[src][r * T:(r + 1) * T]
                i = self.launch(step, [(src, r * T, (r + 1) * T) for r in rows],
                                [(dst, r * T, (r + 1) * T) for r in rows],
                                [(src, 0, R)], [(dst, 0, R)], launch=launch)
                ids.add(i)
            self.named[step.idx] = ids
        else:
            src, dst = step.srcs[0], step.dst
            self.bufs[dst] += self.bufs[src]
            whole = [(src, 0, R), (dst, 0, R)]
            i = self.launch(step, whole, [(dst, 0, R)], whole, [(dst, 0, R)])
            self.named[step.idx] = {i}

    def loop(self, step: Step):
        count = step.bound[1] if step.bound[0] == "static" else min(self.cfg[step.bound[1]], NB)
        slot: dict[int, int] = {}
        for i in range(count):
            rows = slice(i * T, (i + 1) * T)
            xs = [self.bufs[s][rows] for s in step.srcs]
            k = step.kernel
            if k.startswith("ew_"):
                val = EW[k[3:]](xs[0], xs[1])
            elif k == "scale":
                s = step.scalar[1] if step.scalar[0] == "const" else (
                    step.scalar[2] if self.cfg[step.scalar[1]] > 0 else step.scalar[3])
                val = xs[0] * np.float32(s)
            elif k == "rowred":
                val = xs[0] - xs[0].max(axis=1, keepdims=True)
            elif k == "mm":
                val = xs[0] @ self.bufs["w"]
            else:
                val = xs[0] * np.float32(max(self.cfg[step.scalar[0]], 0) + 1)
            self.bufs[step.dst][rows] = val
            region = [(s, i * T, (i + 1) * T) for s in step.srcs]
            reads = region + ([("w", 0, C)] if k == "mm" else [])
            out = [(step.dst, i * T, (i + 1) * T)]
            # DeriveCallDirections: an Out slot under a sequential loop is inout (it waits)
            looked = (reads[1:] if step.no_dep else reads) + (out if step.loop == "range" else [])
            slot[i] = self.launch(step, reads, out, looked, out)
        if step.submit:
            self.named[step.idx] = set(slot.values())


def _conflict(ti: ModelTask, tj: ModelTask) -> bool:
    for (b1, l1, h1) in ti.writes:
        for (b2, l2, h2) in tj.reads + tj.writes:
            if b1 == b2 and l1 < h2 and l2 < h1:
                return True
    for (b1, l1, h1) in ti.reads:
        for (b2, l2, h2) in tj.writes:
            if b1 == b2 and l1 < h2 and l2 < h1:
                return True
    return False


# ---------------------------------------------------------------- the test


def _inputs(seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (R, C)).astype(np.float32)
    b = rng.integers(-4, 5, (R, C)).astype(np.float32)
    w = rng.integers(-2, 3, (C, C)).astype(np.float32)
    return a, b, w


def check(steps, outs, temps, cfgs):
    """Compile the program once; for each ``cfg`` run it in order and on the chip against
    the model."""
    source = render(steps, outs, temps)
    compiled = ir.compile(pl.parse_program(source, filename="tasks_gen.py"), None,
                          dump_passes=False)
    a, b, w = _inputs(len(source))
    for cfg in cfgs:
        bufs = {"a": a.copy(), "b": b.copy(), "w": w.copy(),
                **{o: np.zeros((R, C), np.float32) for o in outs + temps}}
        model = Model(steps, bufs, cfg).run()
        racy = model.racy()
        for chip in (False, True):
            got = [np.zeros((R, C), np.float32) for _ in outs]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = compiled.run(a, b, w, np.array(cfg, np.int32), *got,
                                      config=RunConfig(sim_mode="fast", chip=chip))
            where = f"\ncfg={cfg} chip={chip}\n{source}"
            for name, arr in zip(outs, got):
                np.testing.assert_array_equal(arr, bufs[name], err_msg=name + where)
            if chip:
                got_deps = [t.deps for t in result.chip.tasks]
                assert got_deps == model.inferred(), where
                assert bool(result.races) == racy, (result.races, where)


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(programs(), st.lists(st.lists(st.integers(0, 5), min_size=4, max_size=4),
                            min_size=1, max_size=2))
def test_random_task_graphs_match_numpy_and_report_exactly_their_races(program, cfgs):
    check(*program, cfgs)


def test_an_if_whose_arms_are_runtime_scopes_round_trips_its_two_results():
    """Found by the generator: MaterializeRuntimeScopes wraps each arm in ``pl.scope()``, and
    the printer looked for the arm's yield only as its last statement, so a two-result if
    printed without the results' own MemRefs and re-parsed with its first arm's (the round
    trip after that pass failed). The printer now finds the yield under the scopes."""
    source = f"""import ptoc.language as pl

@pl.program
class TwoResults:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, x: {T16}, z: pl.Out[{T16}]) -> {T16}:
        z[:] = pl.add(x, x)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {TR}, b: {TR}, cfg: pl.Tensor[[4], pl.INT32], o: pl.Out[{TR}]) -> {TR}:
        if pl.tensor.read(cfg, [0]) > 0:
            src = a
            vd = pl.slice(o, [{T}, {C}], [0, 0])
        else:
            src = b
            vd = pl.slice(o, [{T}, {C}], [{T}, 0])
        vd = self.double(pl.slice(src, [{T}, {C}], [0, 0]), vd)
        return o
"""
    with PassContext(verification_level=VerificationLevel.ROUNDTRIP):
        compiled = ir.compile(pl.parse_program(source, filename="two_results.py"), None,
                              dump_passes=False)
    a, b, _ = _inputs(0)
    for flag, src, row in ((1, a, 0), (0, b, T)):
        o = np.zeros((R, C), np.float32)
        compiled.run(a, b, np.array([flag, 0, 0, 0], np.int32), o)
        want = np.zeros_like(o)
        want[row:row + T] = 2 * src[:T]
        np.testing.assert_array_equal(o, want)


DYN_CREATE = f"""import ptoc.language as pl
M = pl.dynamic("M")

@pl.program
class DynCreate:
    @pl.function(type=pl.FunctionType.InCore)
    def sub(self, x: pl.Tensor[[M, {C}], pl.FP32], y: pl.Tensor[[M, {C}], pl.FP32],
            z: pl.Out[pl.Tensor[[M, {C}], pl.FP32]]) -> pl.Tensor[[M, {C}], pl.FP32]:
        z[:] = pl.sub(x, y)
        return z

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, {C}], pl.FP32], b: pl.Tensor[[M, {C}], pl.FP32],
             o: pl.Out[pl.Tensor[[M, {C}], pl.FP32]]) -> pl.Tensor[[M, {C}], pl.FP32]:
        t = pl.create_tensor([pl.tensor.dim(a, 0), {C}], dtype=pl.FP32)
        t = self.sub(a, b, t)
        o = self.sub(t, b, o)
        return o
"""


def test_a_tensor_created_with_the_dim_of_a_dynamic_input_has_its_symbol():
    """Found by the generator: ``pl.create_tensor([pl.tensor.dim(a, 0), C])`` typed the new
    tensor with a shape naming the variable ``a``; InitMemRef re-types parameters and the
    type kept the old ``a`` (IR verification: 'a' used before it is defined). The shape entry
    is now ``a``'s own dimension, the symbol ``M``."""
    compiled = ir.compile(pl.parse_program(DYN_CREATE, filename="dyn_create.py"), None,
                          dump_passes=False)
    main = compiled.source_program.get_function("main")
    assert "pl.Tensor[[M, 32], pl.FP32]" in main.as_python()
    for m in (5, 40):
        a, b = (np.random.default_rng(m + k).integers(-4, 5, (m, C)).astype(np.float32)
                for k in range(2))
        o = np.zeros_like(a)
        compiled.run(a, b, o)
        np.testing.assert_array_equal(o, a - 2 * b)


def _accumulate(rows: str, cols: int) -> str:
    dyn = 'M = pl.dynamic("M")\n' if rows == "M" else ""
    ty = f"pl.Tensor[[{rows}, {cols}], pl.FP32]"
    return f"""import ptoc.language as pl
{dyn}
@pl.program
class Accumulate:
    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, x: {ty}, z: pl.InOut[{ty}]) -> {ty}:
        z[:] = pl.add(z, x)
        return z
"""


@pytest.mark.parametrize("rows,cols,sizes", [("M", C, (1, 37, 300)), ("256", 1024, (256,))])
def test_a_whole_tensor_op_chunked_into_row_blocks_may_read_its_own_destination(rows, cols,
                                                                                sizes):
    """Found by the generator: ``z[:] = pl.add(z, x)`` over rows that do not fit one tile
    (a pl.dynamic M, or [256, 1024]) is computed in row blocks; the block loop stored into
    the block view of ``z`` it read instead of into the carried ``z`` (dynamic: a tensor.slice
    left at codegen; static: a loop yielding an [8, 1024] block as the [256, 1024] tensor)."""
    compiled = ir.compile(pl.parse_program(_accumulate(rows, cols), filename="acc.py"), None,
                          dump_passes=False)
    for m in sizes:
        rng = np.random.default_rng(m)
        x = rng.integers(-4, 5, (m, cols)).astype(np.float32)
        z = rng.integers(-4, 5, (m, cols)).astype(np.float32)
        want = z + x
        compiled.run(x, z)
        np.testing.assert_array_equal(z, want)
