"""Robustness fuzzing: mutated PTO texts and mutated DSL programs end in a PtocError or in
right numbers — never a raw Python exception, a hang, or a silent wrong result.

PTO: seed kernels (``ptoc.sim.examples``, ``ptoc.pto.sync_examples`` and kernels compiled
from the DSL at start) are mutated 1-3 times each (integer literals, event ids, pipes,
opcodes, dtypes, memory spaces, SSA names, loc(...) lines, deleted/duplicated/swapped lines,
inserted tokens) and simulated on the seed's inputs. A run with no race must not depend on
timing: it is run again with another timing profile and both outputs must be bitwise equal.

DSL: programs are generated from templates (elementwise chains, row reductions, K-loop
matmuls, pipelined or not) with mutated shapes, offsets, loop bounds, pipeline stages,
constants, ops, dtypes, planner and dbC flag, compiled
and run; when one runs, its output must match a numpy model of the same parameters. A
quarter more get token-level edits of their source (no model then: the compiled program
must not depend on timing, as above).

Every case runs under small simulator limits and a wall-clock alarm, so the run is bounded.
Counts by outcome are printed; ``escape``, ``wrong`` and ``timeout`` must be 0.

Run: python benchmarks/fuzz_robustness.py [--pto N] [--dsl N] [--seed S] [--quick|--full]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import re
import signal
import tempfile
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from ptoc.errors import PtocError
from ptoc.sim import SimLimits, simulate

from _table import Table

TITLE = "robustness fuzzing: outcomes of mutated PTO texts and mutated DSL programs"
LIMITS = SimLimits(max_instructions=20_000, max_scalar_steps=200_000, max_bytes=256 << 20)
CASE_SECONDS = 60
BAD = ("escape", "wrong", "timeout")


@dataclass
class Outcomes:
    """Counts per outcome, and the first few bad cases (kind, detail, text)."""

    counts: Counter = field(default_factory=Counter)
    errors: Counter = field(default_factory=Counter)
    bad: list = field(default_factory=list)

    def add(self, outcome: str, detail: str = "", text: str = "") -> None:
        self.counts[outcome] += 1
        if outcome in BAD and len(self.bad) < 20:
            self.bad.append((outcome, detail, text))


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _alarm(seconds: int):
    def fire(signum, frame):
        raise _Timeout

    old = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _guarded(outcomes: Outcomes, text: str, body) -> None:
    """Run ``body() -> outcome``; classify PtocErrors, raw exceptions and hangs."""
    try:
        with _alarm(CASE_SECONDS), warnings.catch_warnings(), \
                contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            outcome, detail = body()
    except _Timeout:
        outcome, detail = "timeout", f"over {CASE_SECONDS} s"
    except PtocError as err:
        outcomes.errors[type(err).__name__] += 1
        outcome, detail = "refused (PtocError)", ""
    except Exception as exc:         # noqa: BLE001 - the point: nothing else may escape
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        outcome = "escape"
        detail = f"{type(exc).__name__}: {exc} at {tb.filename}:{tb.lineno}"
    outcomes.add(outcome, detail, text)


def same(a, b) -> bool:
    return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k]), equal_nan=True) for k in a)


# ---- PTO ---------------------------------------------------------------------------------------

INTERESTING = ["0", "1", "-1", "2", "3", "7", "8", "15", "16", "17", "31", "32", "33", "63",
               "64", "65", "127", "128", "1000", "4096", "65536", "2147483648",
               "9223372036854775807", "-9223372036854775808", "1000000000000", "0x10", "-0x1"]
PIPES = ["MTE1", "MTE2", "MTE3", "M", "V", "FIX", "S", "ALL"]
OPCODES = [["pto.tadd", "pto.tsub", "pto.tmul", "pto.tdiv", "pto.tmax", "pto.tmin"],
           ["pto.tadds", "pto.tmuls", "pto.tdivs", "pto.tmaxs"],
           ["pto.texp", "pto.trelu", "pto.tneg", "pto.tabs", "pto.tsqrt", "pto.trecip"],
           ["pto.tload", "pto.tstore"], ["pto.tmatmul", "pto.tmatmul.acc", "pto.tmov",
                                         "pto.textract"],
           ["arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.remsi",
            "arith.floordivsi", "arith.maxsi", "arith.minsi"]]
DTYPES = ["f32", "f16", "bf16", "i32", "i8", "i16", "f64", "index", "i1"]
SPACES = ["vec", "mat", "left", "right", "acc", "bias", "gm"]
TOKENS = ["%", "@", "!", "#", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", "=", "->",
          "0", "-1", "0x1F", "1.5", "nan", "inf", "index", "f32", "scf.for", "scf.if", "loc",
          "\n", " ", "addr", "valid_row", "pto.barrier <PIPE_ALL>", "}\n"]
_INT = re.compile(r"(?<![\w%#.])-?(?:0x[0-9a-fA-F]+|\d+)(?![\w.])")
_SSA = re.compile(r"%[A-Za-z_][\w]*")


def _sub_random(rng, text, pattern, choices) -> str:
    hits = list(re.finditer(pattern, text))
    if not hits:
        return text
    m = rng.choice(hits)
    new = rng.choice(choices) if not callable(choices) else choices(m.group())
    return text[:m.start()] + new + text[m.end():]


def _number(rng):
    def pick(old: str) -> str:
        if rng.random() < 0.6:
            return rng.choice(INTERESTING)
        try:
            value = int(old, 0)
        except ValueError:
            return rng.choice(INTERESTING)
        return str(rng.choice([value + 1, value - 1, value * 2, value // 2, -value, value * 1000]))
    return pick


def mutate_pto(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 3)):
        lines = text.splitlines()
        kind = rng.randrange(14)
        if kind == 0:
            text = _sub_random(rng, text, _INT, _number(rng))
        elif kind == 1:
            text = _sub_random(rng, text, r"EVENT_ID\d+", [f"EVENT_ID{i}" for i in range(10)])
        elif kind == 2:
            text = _sub_random(rng, text, r"PIPE_[A-Z0-9]+", [f"PIPE_{p}" for p in PIPES])
        elif kind == 3:
            family = rng.choice(OPCODES)
            text = _sub_random(rng, text, "|".join(re.escape(o) + r"(?=[\s(])" for o in family),
                               family)
        elif kind == 4:
            text = _sub_random(rng, text, r"\b(?:f32|f16|bf16|i32|i8|index)\b", DTYPES)
        elif kind == 5:
            text = _sub_random(rng, text, r"(?<=loc=)\w+", SPACES)
        elif kind == 6:
            names = sorted(set(_SSA.findall(text)))
            text = _sub_random(rng, text, _SSA, names or ["%x"])
        elif kind == 7:
            text = _sub_random(rng, text, r'(?<=":)\d+', ["0x10", "-3", "99999999999", "0"])
        elif kind == 8 and lines:
            del lines[rng.randrange(len(lines))]
            text = "\n".join(lines) + "\n"
        elif kind == 9 and lines:
            i = rng.randrange(len(lines))
            lines.insert(i, lines[i])
            text = "\n".join(lines) + "\n"
        elif kind == 10 and len(lines) > 1:
            i = rng.randrange(len(lines) - 1)
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
            text = "\n".join(lines) + "\n"
        elif kind in (11, 12) and len(lines) > 3:
            text = _insert_scalar_op(rng, lines, zero=kind == 12)
        else:
            pos = rng.randrange(len(text) + 1)
            text = text[:pos] + rng.choice(TOKENS) + text[pos + rng.randint(0, 8):]
    return text


def _insert_scalar_op(rng: random.Random, lines: list[str], *, zero: bool) -> str:
    """A new ``arith`` op on two existing values (or a zero), and one use of its result."""
    names = sorted(set(_SSA.findall("\n".join(lines))))
    i = rng.randrange(2, len(lines) - 1)
    a, b = rng.choice(names), "%fz0" if zero else rng.choice(names)
    op = rng.choice(OPCODES[-1])
    indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    new = [f"{indent}%fz0 = arith.constant 0 : index"] if zero else []
    new.append(f"{indent}%fz1 = {op} {a}, {b} : index")
    lines[i:i] = new
    text = "\n".join(lines) + "\n"
    return _sub_random(rng, text, re.escape(rng.choice(names)) + r"\b(?!\s*=)", ["%fz1"])


def pto_seeds() -> list[tuple[str, str, dict]]:
    """(name, Level-2/3 PTO text, inputs by parameter name) of the seed kernels."""
    from ptoc.pto import parse
    from ptoc.pto import sync_examples as sx
    from ptoc.sim import examples as ex
    from ptoc.sim.inputs import random_inputs

    texts = {"k_loop_sum": ex.k_loop_sum(6), "dbuf_matmul": ex.dbuf_matmul(32, 32, 128, 32),
             "two_acc_matmul": ex.two_acc_matmul(32, 32, 32, 4),
             "kloop_matmul": sx.kloop_matmul(32, 32, 128, 32),
             "vector_chunks": sx.vector_chunks(32, 32, 8),
             "dbc_matmul": sx.dbc_matmul(32, 32, 32, 4)}
    texts.update({f"random_{s}": sx.random_program(s, ops=12) for s in range(4)})
    texts.update(_compiled_seeds())
    seeds = []
    for name, text in texts.items():
        kernel = parse(text).kernels[0]
        inputs = random_inputs(kernel, seed=1, scalars={"n": 2})
        seeds.append((name, text, inputs))
    return seeds


def _compiled_seeds() -> dict[str, str]:
    from ptoc import ir
    from ptoc.language import parse_program

    out = {}
    for case in (ElementwiseCase(rows=16, cols=64, blocks=2, ops=("add", "relu", "muls")),
                 MatmulCase(m=32, k=64, n=32, kb=2, dtype="BF16"),
                 RowSumCase(rows=16, cols=32)):
        with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stderr(io.StringIO()):
            compiled = ir.compile(parse_program(case.source()), tmp, dump_passes=False)
        out.update({f"compiled_{k}": t for k, t in compiled.pto_text.items()})
    return out


def fuzz_pto(count: int, seed: int) -> Outcomes:
    rng = random.Random(seed)
    outcomes = Outcomes()
    seeds = pto_seeds()
    for _ in range(count):
        name, text, inputs = rng.choice(seeds)
        mutant = mutate_pto(rng, text)
        derived = rng.random() < 0.2         # inputs made from the mutant (as `ptoc sim` does)

        def case(mutant=mutant, inputs=inputs, derived=derived):
            if derived:
                from ptoc.pto import parse
                from ptoc.sim.inputs import random_inputs

                inputs = random_inputs(parse(mutant).kernels[0], scalars={"n": 2},
                                       limits=LIMITS)
            timed = simulate(mutant, dict(inputs), limits=LIMITS)
            if timed.races:
                return "ran, races reported", ""
            other = simulate(mutant, dict(inputs), limits=LIMITS, profile="a2a3-ptoisa")
            if not same(timed.outputs, other.outputs):
                return "wrong", "race-free run differs between timing profiles"
            return "ran, race-free, timing-independent", ""

        _guarded(outcomes, mutant, case)
    return outcomes


# ---- DSL ---------------------------------------------------------------------------------------

_HEAD = """\
import ptoc.language as pl

@pl.program
class Fuzz:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, {params}) -> pl.Tensor[[{R}, {C}], pl.FP32]:
{body}        return {ret}
"""
NP = {"FP32": np.float32, "FP16": np.float16, "BF16": ml_dtypes.bfloat16}
_UNARY = {"relu": lambda v: np.maximum(v, 0), "neg": np.negative, "exp": np.exp}
_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum,
           "minimum": np.minimum}
_SCALAR = {"muls": np.multiply, "adds": np.add}


@dataclass
class ElementwiseCase:
    """y[b*rows:(b+1)*rows] = ops(x-block, w-block) for b < blocks, in a pl.range loop."""

    rows: int = 16
    cols: int = 64
    blocks: int = 2
    ops: tuple = ("add",)
    scalar: float = 0.5
    offset: int = 0            # extra row offset of the loads (out of range -> refused)

    @property
    def shape(self):
        return (self.rows * self.blocks, self.cols)

    def source(self) -> str:
        R, C = self.shape
        lines = [f"        for b, (acc,) in pl.range(0, {self.blocks}, 1, init_values=(y,)):",
                 f"            t = pl.load(x, [b * {self.rows} + {self.offset}, 0], "
                 f"[{self.rows}, {self.cols}])",
                 f"            u = pl.load(w, [b * {self.rows}, 0], [{self.rows}, {self.cols}])"]
        for op in self.ops:
            if op in _BINARY:
                lines.append(f"            t = pl.{op}(t, u)")
            elif op in _SCALAR:
                lines.append(f"            t = pl.{op}(t, {self.scalar!r})")
            else:
                lines.append(f"            t = pl.{op}(t)")
        lines += [f"            acc2 = pl.store(t, [b * {self.rows}, 0], acc)",
                  "            r = pl.yield_(acc2)"]
        params = (f"x: pl.Tensor[[{R}, {C}], pl.FP32], w: pl.Tensor[[{R}, {C}], pl.FP32], "
                  f"y: pl.Out[pl.Tensor[[{R}, {C}], pl.FP32]]")
        return _HEAD.format(params=params, R=R, C=C, body="\n".join(lines) + "\n", ret="r")

    def inputs(self, rng):
        x = rng.standard_normal(self.shape).astype(np.float32)
        w = rng.standard_normal(self.shape).astype(np.float32)
        return [x, w, np.zeros(self.shape, np.float32)]

    def golden(self, x, w, y):
        out = np.zeros_like(y)
        for b in range(self.blocks):
            r0 = b * self.rows
            t = x[r0 + self.offset:r0 + self.offset + self.rows].astype(np.float32)
            if t.shape[0] != self.rows:
                return None                      # out of range: must be refused
            u = w[r0:r0 + self.rows]
            for op in self.ops:
                if op in _BINARY:
                    t = _BINARY[op](t, u)
                elif op in _SCALAR:
                    t = _SCALAR[op](t, np.float32(self.scalar))
                else:
                    t = _UNARY[op](t)
            out[r0:r0 + self.rows] = t
        return out

    tolerance = (1e-5, 1e-5)


@dataclass
class RowSumCase:
    """y[:, 0:1] = row sums of x, via Vec tiles."""

    rows: int = 16
    cols: int = 32

    def source(self) -> str:
        R, C = self.rows, self.cols
        body = (f"        t = pl.load(x, [0, 0], [{R}, {C}])\n"
                f"        tmp = pl.tile.create([{R}, {C}], dtype=pl.FP32)\n"
                f"        s = pl.row_sum(t, tmp)\n"
                f"        y = pl.store(s, [0, 0], y)\n")
        params = (f"x: pl.Tensor[[{R}, {C}], pl.FP32], "
                  f"y: pl.Out[pl.Tensor[[{R}, 1], pl.FP32]]")
        return _HEAD.format(params=params, R=R, C=1, body=body, ret="y")

    def inputs(self, rng):
        return [rng.standard_normal((self.rows, self.cols)).astype(np.float32),
                np.zeros((self.rows, 1), np.float32)]

    def golden(self, x, y):
        return x.sum(axis=1, keepdims=True, dtype=np.float64).astype(np.float32)

    tolerance = (1e-4, 1e-4)


@dataclass
class MatmulCase:
    """y = x @ w through Mat tiles, K split into kb steps accumulated in L0C."""

    m: int = 32
    k: int = 64
    n: int = 32
    kb: int = 2
    dtype: str = "BF16"
    stages: int = 0            # > 0: a pl.pipeline K loop with that many stages

    def source(self) -> str:
        M, K, N, step = self.m, self.k * self.kb, self.n, self.k
        loop = f"pl.pipeline(0, {self.kb}, 1, stage={self.stages}, " if self.stages else \
            f"pl.range(0, {self.kb}, 1, "
        body = (f"        acc0 = pl.tile.create([{M}, {N}], dtype=pl.FP32, "
                "target_memory=pl.Mem.Acc)\n"
                f"        for kb, (acc,) in {loop}init_values=(acc0,)):\n"
                f"            am = pl.load(x, [0, kb * {step}], [{M}, {step}], "
                "target_memory=pl.Mem.Mat)\n"
                f"            bm = pl.load(w, [kb * {step}, 0], [{step}, {N}], "
                "target_memory=pl.Mem.Mat)\n"
                "            if kb == 0:\n"
                "                r = pl.matmul(am, bm)\n"
                "                a1 = pl.yield_(r)\n"
                "            else:\n"
                "                r2 = pl.matmul_acc(acc, am, bm)\n"
                "                a1 = pl.yield_(r2)\n"
                "            a2 = pl.yield_(a1)\n"
                "        y = pl.store(a2, [0, 0], y)\n")
        params = (f"x: pl.Tensor[[{M}, {K}], pl.{self.dtype}], "
                  f"w: pl.Tensor[[{K}, {N}], pl.{self.dtype}], "
                  f"y: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]")
        return _HEAD.format(params=params, R=M, C=N, body=body, ret="y")

    def inputs(self, rng):
        K = self.k * self.kb
        return [rng.standard_normal((self.m, K)).astype(NP[self.dtype]),
                rng.standard_normal((K, self.n)).astype(NP[self.dtype]),
                np.zeros((self.m, self.n), np.float32)]

    def golden(self, x, w, y):
        return (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)

    @property
    def tolerance(self):
        return (1e-4, 1e-3) if self.dtype == "FP32" else (2e-2, 5e-2)


def random_case(rng: random.Random):
    dims = [1, 2, 3, 8, 15, 16, 17, 32, 48, 64, 128]
    kind = rng.randrange(3)
    if kind == 0:
        ops = tuple(rng.choice(list(_BINARY) + list(_SCALAR) + list(_UNARY))
                    for _ in range(rng.randint(1, 4)))
        return ElementwiseCase(rows=rng.choice(dims), cols=rng.choice([8, 16, 32, 64, 128, 24]),
                               blocks=rng.choice([1, 1, 2, 3, 4, 0]), ops=ops,
                               scalar=rng.choice([0.5, -2.0, 0.0, 1e30, 3]),
                               offset=rng.choice([0, 0, 0, 1, 16, -1]))
    if kind == 1:
        return RowSumCase(rows=rng.choice(dims), cols=rng.choice([8, 16, 32, 64, 100]))
    return MatmulCase(m=rng.choice([16, 32, 48, 64, 15]), k=rng.choice([16, 32, 64, 128, 24]),
                      n=rng.choice([16, 32, 64, 128, 17]), kb=rng.choice([1, 2, 2, 3, 4, 0]),
                      dtype=rng.choice(["BF16", "FP16", "FP32"]),
                      stages=rng.choice([0, 0, 2, 2, 3, 1]))


def mutate_source(rng: random.Random, text: str) -> str:
    """Token-level edits of DSL source (names, numbers, operators, deleted lines)."""
    for _ in range(rng.randint(1, 3)):
        lines = text.splitlines()
        kind = rng.randrange(5)
        if kind == 0:
            text = _sub_random(rng, text, r"(?<![\w.])\d+(?![\w.])", _number(rng))
        elif kind == 1 and len(lines) > 6:
            del lines[rng.randrange(5, len(lines))]
            text = "\n".join(lines) + "\n"
        elif kind == 2:
            names = sorted(set(re.findall(r"\b[a-z]\w*\b", text)) - {"pl", "self", "class"})
            text = _sub_random(rng, text, r"\b[a-z]\w*\b", names)
        elif kind == 3:
            text = _sub_random(rng, text, r"[+*/\-]", ["+", "-", "*", "//", "%", "/"])
        else:
            text = _sub_random(rng, text, r"pl\.\w+", ["pl.add", "pl.relu", "pl.matmul",
                                                       "pl.load", "pl.store", "pl.Mem.Acc",
                                                       "pl.FP16", "pl.range", "pl.yield_"])
    return text


def fuzz_dsl(count: int, seed: int) -> Outcomes:
    from ptoc import ir
    from ptoc.language import parse_program
    from ptoc.runtime import RunConfig

    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    outcomes = Outcomes()
    for i in range(count):
        spec = random_case(rng)
        text = spec.source()
        textual = rng.random() < 0.25
        if textual:
            text = mutate_source(rng, text)
        planner = rng.choice(["PYPTO", "PYPTO", "PTOAS"])
        dbc = rng.random() < 0.3
        inputs = spec.inputs(nprng)

        def case(spec=spec, text=text, textual=textual, planner=planner, dbc=dbc, inputs=inputs):
            with tempfile.TemporaryDirectory() as tmp:
                compiled = ir.compile(parse_program(text, "<fuzz>"), tmp, dump_passes=False,
                                      memory_planner=planner,
                                      enable_pypto_l0c_double_buffer=dbc)
                config = RunConfig(sim_limits=LIMITS)
                args = [np.array(a) for a in inputs]
                result = compiled.run(*args, config=config)
                if result.races:
                    return "ran, races reported (compiled)", "a compiled program has races"
                if textual:
                    again = [np.array(a) for a in inputs]
                    other = compiled.run(*again, config=RunConfig(sim_limits=LIMITS,
                                                                  profile="a2a3-ptoisa"))
                    ok = same(result.outputs, other.outputs)
                    return ("ran, timing-independent", "") if ok else \
                        ("wrong", "race-free run differs between timing profiles")
                expected = spec.golden(*inputs)
                if expected is None:
                    return "wrong", "an out-of-range program ran instead of being refused"
                actual = list(result.outputs.values())[-1]
                rtol, atol = spec.tolerance
                if not np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True):
                    err = float(np.nanmax(np.abs(actual - expected)))
                    return "wrong", f"max error {err:.3g} against the numpy model"
                return "ran, matches numpy", ""

        _guarded(outcomes, text, case)
    return outcomes


# ---- report ------------------------------------------------------------------------------------

def run(quick: bool = False, full: bool = False, pto: int | None = None, dsl: int | None = None,
        seed: int = 16) -> list[Table]:
    n_pto = pto if pto is not None else (30 if quick else 2000 if full else 300)
    n_dsl = dsl if dsl is not None else (10 if quick else 2000 if full else 100)
    tables = []
    for name, count, fuzz in (("PTO", n_pto, fuzz_pto), ("DSL", n_dsl, fuzz_dsl)):
        outcomes = fuzz(count, seed)
        table = Table("fuzz_robustness", f"{TITLE}: {count} mutated {name} inputs (seed {seed})",
                      ["outcome", "count"])
        for outcome, n in sorted(outcomes.counts.items()):
            table.add(outcome, n)
        for bad in BAD:
            if bad not in outcomes.counts:
                table.add(bad, 0)
        table.notes.append("PtocError classes: " + ", ".join(
            f"{k} {v}" for k, v in outcomes.errors.most_common()))
        for outcome, detail, _ in outcomes.bad[:5]:
            table.notes.append(f"{outcome}: {detail}")
        table.outcomes = outcomes
        tables.append(table)
    return tables


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pto", type=int)
    ap.add_argument("--dsl", type=int)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--full", action="store_true", help="2000 PTO and 2000 DSL inputs")
    ap.add_argument("--show", action="store_true", help="print the texts of bad cases")
    args = ap.parse_args()
    for table in run(quick=args.quick, full=args.full, pto=args.pto, dsl=args.dsl,
                     seed=args.seed):
        print(table.render())
        if args.show:
            for outcome, detail, text in table.outcomes.bad:
                print(f"--- {outcome}: {detail}\n{text}")


if __name__ == "__main__":
    main()
