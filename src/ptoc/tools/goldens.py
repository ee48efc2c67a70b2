"""The reference ``ptoc run`` compares a run with, and what that reference can prove.

First match wins:

1. the file's ``golden(inputs) -> outputs``: it must give a value for every output; an
   output it leaves out (or a ``None``/``{}`` result) fails the run by name, because a
   check that compares nothing must never read as a pass;
2. numpy's ``a @ b`` in float64 when the program is a plain matmul: the entry is exactly
   ``(a[M, K], b[K, N], out[M, N])`` and the program does nothing but move data and
   multiply (no vector op, no transpose), so ``a @ b`` is what it means;
3. otherwise there is no golden: the same program run with every pipe serialised is
   compared instead, which proves the synchronisation, not the arithmetic. A program with
   a core group (a mixed kernel) has no serialised run, so it needs a golden.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

import numpy as np

#: ops that move or hold data without computing; with the matmul ops they make a plain matmul
_DATA_OPS = frozenset({
    "tensor.create", "tensor.slice", "tensor.assemble", "tile.load", "tile.store", "tile.move",
    "tile.extract", "tile.create", "tile.slice", "tile.assemble", "tile.alloc"})
_MATMUL_OPS = frozenset({"tensor.matmul", "tensor.matmul_acc", "tile.matmul", "tile.matmul_acc"})

SERIAL_KIND = "serialised-run"


@dataclass
class Golden:
    """Expected outputs, what produced them, and outputs the reference left unchecked."""

    expected: dict
    kind: str
    independent: bool
    problems: list = field(default_factory=list)

    @property
    def description(self) -> str:
        if self.kind == SERIAL_KIND:
            return ("none (no golden() in the file and not a plain matmul): compared with a "
                    "serialised run of the same program, which checks the synchronisation, "
                    "not the arithmetic")
        return self.kind


def copy_value(value):
    return value.copy() if isinstance(value, np.ndarray) else value


def program_ops(program) -> set[str]:
    """Every op called anywhere in ``program`` (function calls excluded)."""
    from ptoc.ir.visitor import IRVisitor

    found: set[str] = set()

    class _Ops(IRVisitor):
        def visit_call(self, node):
            if not node.is_function:
                found.add(node.op)
            super().visit_call(node)

    _Ops().visit(program)
    return found


def _transposes(program) -> bool:
    from ptoc.ir.visitor import IRVisitor

    seen = []

    class _Trans(IRVisitor):
        def visit_call(self, node):
            if node.op in _MATMUL_OPS and any(v is True for k, v in node.kwargs
                                              if k in ("a_trans", "b_trans")):
                seen.append(node)
            super().visit_call(node)

    _Trans().visit(program)
    return bool(seen)


def is_plain_matmul(program) -> bool:
    """True when ``program`` only moves data and multiplies matrices (no other arithmetic)."""
    ops = program_ops(program)
    return bool(ops & _MATMUL_OPS) and ops <= _DATA_OPS | _MATMUL_OPS \
        and not _transposes(program)


def matmul_golden(compiled, tensors: dict) -> dict | None:
    """``a @ b`` for a plain matmul shaped exactly like ``(a[M, K], b[K, N], out[M, N])``."""
    from ptoc.dtypes import Direction

    params = compiled.entry.params
    ins = [p for p in params if p.direction is Direction.In]
    outs = [p for p in params if p.direction is not Direction.In]
    if len(ins) != 2 or len(outs) != 1 or len(params) != 3:
        return None
    a, b, o = (tensors.get(p.var.name) for p in (ins[0], ins[1], outs[0]))
    if not all(isinstance(x, np.ndarray) for x in (a, b, o)) or a.ndim != 2 or b.ndim != 2 \
            or a.shape[1] != b.shape[0] or o.shape != (a.shape[0], b.shape[1]):
        return None
    if not is_plain_matmul(compiled.source_program):
        return None
    return {outs[0].var.name: a.astype(np.float64) @ b.astype(np.float64)}


def _closest(given: list, names: list[str]) -> str | None:
    """The output name a misspelt golden key most likely meant (case-insensitive)."""
    lower = {n.lower(): n for n in names}
    for key in given:
        match = difflib.get_close_matches(str(key).lower(), list(lower), 1, 0.5)
        if match:
            return lower[match[0]]
    return None


def _unchecked(value: dict, outs: list[str], shapes: dict) -> list[str]:
    """Why the file golden does not cover the outputs: missing, unknown or misshaped keys."""
    problems = []
    missing = [name for name in outs if name not in value]
    extra = [k for k in value if k not in outs]
    if missing:
        text = (f"golden() gave no value for output{'s' if len(missing) > 1 else ''} "
                f"{', '.join(repr(m) for m in missing)}, so "
                f"{'they were' if len(missing) > 1 else 'it was'} not checked")
        if extra:
            guess = _closest(extra, missing)
            text += (f" (it returned {', '.join(repr(str(k)) for k in extra)}"
                     + (f"; did you mean {guess!r}?)" if guess else ")"))
        problems.append(text + " (fix: return {output name: expected array} for every output: "
                        + ", ".join(outs) + ")")
    elif extra:
        problems.append(f"golden() returned {', '.join(repr(str(k)) for k in extra)}, which "
                        f"{'are not outputs' if len(extra) > 1 else 'is not an output'} of the "
                        f"program (fix: use the output names: {', '.join(outs)})")
    for name in outs:
        if name in value and np.shape(value[name]) != shapes[name]:
            problems.append(f"golden() value for output {name!r} has shape "
                            f"{tuple(np.shape(value[name]))} but the output is {shapes[name]}, "
                            "so it was not checked (fix: return an array of the output's shape)")
    return problems


def file_golden(loaded, inputs: dict, outs: list[str], shapes: dict) -> Golden:
    """Call the file's ``golden()`` on copies of the inputs and check it covers every output."""
    from ptoc.errors import PtocError
    from ptoc.tools.loader import LoadError

    try:
        value = loaded.golden({k: copy_value(v) for k, v in inputs.items()})
    except PtocError:
        raise
    except Exception as exc:
        raise LoadError(f"{loaded.path}: golden() raised {type(exc).__name__}: {exc}",
                        hint="golden(inputs) gets a dict of arrays and returns the outputs") \
            from exc
    if value is None:
        return Golden({}, "file", True, [
            f"golden() returned None, so no output was checked ({', '.join(outs)}) (fix: "
            "return {output name: expected array}; writing into the inputs is not a result)"])
    if not isinstance(value, dict):
        if len(outs) != 1:
            raise LoadError(f"{loaded.path}: golden() returned one array but the program "
                            f"has {len(outs)} outputs ({', '.join(outs)})",
                            hint="return a dict {output name: array}")
        value = {outs[0]: value}
    problems = _unchecked(value, outs, shapes)
    expected = {k: np.asarray(v) for k, v in value.items()
                if k in outs and np.shape(v) == shapes[k]}
    return Golden(expected, "file", True, problems)


def choose_golden(loaded, compiled, inputs: dict, outs: list[str], shapes: dict,
                  config) -> Golden:
    """The first applicable reference (see the module doc)."""
    if loaded.golden is not None:
        return file_golden(loaded, inputs, outs, shapes)
    derived = matmul_golden(compiled, inputs)
    if derived is not None:
        return Golden(derived, "numpy matmul", True)
    import dataclasses

    from ptoc.dtypes import FunctionType
    from ptoc.tools.loader import LoadError

    groups = [f.name for f in compiled.program.functions if f.func_type is FunctionType.Group]
    if groups:
        raise LoadError(f"{loaded.path}: no golden() and '{groups[0]}' runs on a core group, "
                        "whose cores cannot be run one pipe at a time (the serialised-run "
                        "reference)", hint="add golden(inputs) -> {output name: expected array} "
                        "to the file")
    serial = compiled.run(*[copy_value(v) for v in inputs.values()],
                          config=dataclasses.replace(config, sim_mode="serial", trace=False,
                                                     chip=False, chip_clusters=None))
    return Golden(dict(serial.outputs), SERIAL_KIND, False)
