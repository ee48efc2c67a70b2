"""Decision records: why the compiler chose what it chose, as data.

Passes that decide something a user may want to question (the L0 tile, dbC on or off and
the gate that settled it, a pipeline depth shed by the capacity gate, a PIPE_ALL fallback
of InsertSync) call ``record_decision(kind, summary, **fields)``. The record lands in the
``DecisionLog`` that the running compile opened with ``collect_decisions()``; outside a
compile nothing is recorded (the hook is a no-op), so passes run alone stay cheap.
``ir.compile`` writes the log as ``report/decisions.json`` (for tools) and
``report/decisions.md`` (for people).

Kinds: ``tile_choice``, ``dbc``, ``capacity_shed``, ``capacity_fallback``,
``capacity_serialise``, ``pipe_all_fallback``, ``tensor_chunking``. Field values must be JSON-serialisable (enums become names).
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ptoc.files import write_json, write_text

KINDS = ("tile_choice", "dbc", "capacity_shed", "capacity_fallback", "capacity_serialise",
         "pipe_all_fallback", "tensor_chunking")


@dataclass(frozen=True)
class Decision:
    """One decision: its kind, the pass that made it, a one-line summary and the details."""

    kind: str
    pass_name: str
    summary: str
    fields: dict[str, Any] = field(default_factory=dict)
    location: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "pass": self.pass_name, "summary": self.summary,
                "location": self.location, **{k: _plain(v) for k, v in self.fields.items()}}


class DecisionLog:
    """The decisions of one compile, in the order they were made."""

    def __init__(self) -> None:
        self.items: list[Decision] = []

    def add(self, decision: Decision) -> None:
        self.items.append(decision)

    def of_kind(self, kind: str) -> list[Decision]:
        return [d for d in self.items if d.kind == kind]

    def __iter__(self) -> Iterator[Decision]:
        return iter(list(self.items))

    def __len__(self) -> int:
        return len(self.items)


_CURRENT: contextvars.ContextVar[DecisionLog | None] = contextvars.ContextVar(
    "ptoc_decision_log", default=None)


@contextlib.contextmanager
def collect_decisions() -> Iterator[DecisionLog]:
    """Open a fresh log for one compile (nested compiles get their own)."""
    log = DecisionLog()
    token = _CURRENT.set(log)
    try:
        yield log
    finally:
        _CURRENT.reset(token)


def current_log() -> DecisionLog | None:
    return _CURRENT.get()


def record_decision(kind: str, summary: str, *, pass_name: str | None = None,
                    location=None, **fields: Any) -> Decision | None:
    """Append a decision to the running compile's log; None (and no work) outside a compile."""
    log = _CURRENT.get()
    if log is None:
        return None
    if kind not in KINDS:
        raise ValueError(f"unknown decision kind {kind!r}; known: {', '.join(KINDS)}")
    if pass_name is None:
        from ptoc.passes.base import current_pass_name

        pass_name = current_pass_name() or "?"
    decision = Decision(kind, pass_name, summary, dict(fields),
                        str(location) if location is not None else None)
    log.add(decision)
    return decision


def record_pipe_all_fallback(note) -> Decision | None:
    """An InsertSync ``SyncNote`` of kind ``pipe_all_fallback`` as a decision."""
    def where(op):
        return None if op is None else {"opcode": op[0], "pto_line": op[1]}

    return record_decision(
        "pipe_all_fallback", str(note), pass_name="InsertSync", location=note.producer_loc,
        kernel=note.kernel, gate="event_ids", reason=note.reason,
        src_pipe=getattr(note.src, "name", None), dst_pipe=getattr(note.dst, "name", None),
        producer=where(note.producer), consumer=where(note.consumer))


def is_recording() -> bool:
    """Whether a compile is collecting (lets a pass skip work only a record needs)."""
    return _CURRENT.get() is not None


#: values ``_plain`` returns as they are (exact types: an IntEnum member is not one of them)
_AS_IS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    """A JSON-friendly copy: enums by name, tuples as lists, dataclass-likes via __dict__."""
    if type(value) in _AS_IS:
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "item"):          # numpy scalars
        return value.item()
    return str(value)


# ---- writers ------------------------------------------------------------------------------

def write_decisions(log: DecisionLog, output_dir: str | Path) -> tuple[Path, Path]:
    """Write ``report/decisions.json`` and ``report/decisions.md``; returns both paths."""
    report = Path(output_dir) / "report"
    records = [d.to_json() for d in log]
    counts = {kind: sum(1 for d in log if d.kind == kind) for kind in KINDS}
    json_path = report / "decisions.json"
    write_json(json_path, {"version": 1, "counts": counts, "decisions": records}, indent=2)
    md_path = write_text(report / "decisions.md", render_markdown(log))
    return json_path, md_path


_TITLES = {"tile_choice": "L0 tile choices", "dbc": "dbC (L0C double buffer)",
           "capacity_shed": "Capacity-gate sheds", "capacity_fallback": "Capacity-gate fallbacks",
           "capacity_serialise": "Pipeline stages serialised to fit",
           "pipe_all_fallback": "PIPE_ALL fallbacks (InsertSync)",
           "tensor_chunking": "Tensor ops computed in row or column blocks (ChunkTensorOps)"}


def render_markdown(log: DecisionLog) -> str:
    """The readable report: one section per kind, a table of alternatives for tile choices."""
    lines = ["# Compile decisions", ""]
    if not len(log):
        lines += ["No decision points were reached (no matmul to tile, no pipeline, no sync "
                  "fallback).", ""]
        return "\n".join(lines)
    for kind in KINDS:
        items = log.of_kind(kind)
        if not items:
            continue
        lines += [f"## {_TITLES[kind]} ({len(items)})", ""]
        for d in items:
            where = f" ({d.location})" if d.location else ""
            lines.append(f"- **{d.pass_name}**{where}: {d.summary}")
            gate = d.fields.get("gate")
            if gate:
                lines.append(f"  - decided by: `{gate}`" + (f" — {d.fields['reason']}"
                                                            if d.fields.get("reason") else ""))
            if d.fields.get("simulated_speedup") is not None:
                model = d.fields.get("model_speedup")
                lines.append(f"  - simulated ({d.fields.get('simulated_profile')}): "
                             f"{d.fields['simulated_speedup']:.2f}x with the flag"
                             + (f"; the chooser's model: {model:.2f}x" if model else ""))
            if d.fields.get("model_disagrees"):
                lines.append(f"  - **the model is wrong here**: {d.fields['model_disagrees']}")
            alts = d.fields.get("alternatives")
            if alts:
                lines += ["", "  | rank | m | n | k | stationarity | dbC | est. wall | load | mad "
                          "| drain |", "  | --- | --- | --- | --- | --- | --- | --- | --- | --- "
                          "| --- |"]
                for i, a in enumerate(alts, 1):
                    lines.append(f"  | {i} | {a['m']} | {a['n']} | {a['k']} | "
                                 f"{_plain(a['stationarity'])} | {2 if a['double_buffer_c'] else 1}"
                                 f" | {a['wall_cycles']} | {a['load_cycles']:.0f} | "
                                 f"{a['mad_cycles']:.0f} | {a['drain_cycles']:.0f} |")
                lines.append("")
        lines.append("")
    return "\n".join(lines)


__all__ = ["Decision", "DecisionLog", "KINDS", "collect_decisions", "current_log",
           "record_decision", "record_pipe_all_fallback", "is_recording", "write_decisions", "render_markdown"]
