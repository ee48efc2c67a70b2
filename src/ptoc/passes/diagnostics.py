"""Diagnostics: coded, non-fatal findings of passes (perf hints, warnings).

Passes never print. They call ``report_diagnostic(code, message, location=...)``; the
finding lands in the sink of the current PassContext unless its code is disabled there.
At the end of a compile the sink is written to ``report/perf_hints.log`` (one line per
finding, repeated findings at one source location merged) and a single summary line goes
to stderr. Every code has an entry in ``CODES`` with a one-paragraph explanation, which is
what ``ptoc explain CODE`` prints.
"""

from __future__ import annotations

import enum
import fnmatch
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, TextIO

from ptoc.errors import PassError, SourceLoc
from ptoc.files import write_text
from ptoc.messages import LogLevel, shows


class Severity(enum.Enum):
    """How serious a finding is; the value is the tag used in the log line."""

    Error = "error"
    Warning = "warning"
    PerfHint = "perf_hint"
    Info = "info"


@dataclass(frozen=True)
class Diagnostic:
    """One finding: a stable code, its severity, who found it, what and where."""

    code: str
    severity: Severity
    pass_name: str
    message: str
    location: SourceLoc | None = None

    def format(self, occurrences: int = 1) -> str:
        """The log line, e.g. ``[perf_hint PH001] Rule: message at file:line:col``."""
        info = CODES.get(self.code)
        rule = info.rule if info is not None and info.rule else self.pass_name
        text = f"[{self.severity.value} {self.code}] {rule}: {self.message}"
        if occurrences > 1:
            text += f" ({occurrences} occurrences at this source location)"
        if self.location is not None:
            text += f" at {self.location}"
        return text


# ---- code registry -----------------------------------------------------------------------

@dataclass(frozen=True)
class DiagnosticCode:
    """Registry entry: default severity, the rule name shown in logs, and the explanation."""

    code: str
    severity: Severity
    rule: str
    title: str
    explanation: str


CODES: dict[str, DiagnosticCode] = {}


def register_diagnostic_code(code: str, severity: Severity, rule: str, title: str,
                             explanation: str, *, replace: bool = False) -> DiagnosticCode:
    """Add a code to the registry; a pass module calls this at import time for its own codes."""
    entry = DiagnosticCode(code, severity, rule, title, " ".join(explanation.split()))
    if code in CODES and not replace and CODES[code] != entry:
        raise PassError(f"diagnostic code {code!r} is already registered by rule {CODES[code].rule!r}",
                        hint="pick a new code or pass replace=True")
    CODES[code] = entry
    return entry


def explain(code: str) -> str:
    """The text ``ptoc explain CODE`` prints; unknown codes raise with the known list."""
    entry = CODES.get(code) or CODES.get(code.upper())
    if entry is None:
        raise PassError(f"unknown diagnostic code {code!r}",
                        hint=f"known codes: {', '.join(sorted(CODES))}")
    return f"{entry.code} ({entry.severity.name}, {entry.rule}): {entry.title}\n\n{entry.explanation}\n"


def matches(code: str, pattern: str) -> bool:
    """Whether a ``disabled_diagnostics`` entry covers ``code``.

    An entry is an exact code (``PH-MR-001``), a glob (``PH-AT-*``) or a severity name
    (``PerfHint``, ``Warning``, ``Info``) that silences a whole class.
    """
    if pattern == code or fnmatch.fnmatchcase(code, pattern):
        return True
    entry = CODES.get(code)
    return entry is not None and pattern in (entry.severity.name, entry.severity.value)


def validate_disabled(entries: Iterable[str]) -> frozenset[str]:
    """Check every ``disabled_diagnostics`` entry names something real, so typos are not silent."""
    if isinstance(entries, str):
        entries = (entries,)
    out = []
    severity_names = {s.name for s in Severity} | {s.value for s in Severity}
    for entry in entries:
        if not isinstance(entry, str):
            raise PassError(f"disabled_diagnostics entry {entry!r} is not a string",
                            hint="give diagnostic codes such as 'PH-MR-001' or globs such as 'PH-AT-*'")
        known = entry in CODES or entry in severity_names or any(
            fnmatch.fnmatchcase(c, entry) for c in CODES)
        if not known:
            raise PassError(f"disabled_diagnostics names unknown diagnostic code {entry!r}",
                            hint=f"known codes: {', '.join(sorted(CODES))}; globs like 'PH-AT-*' "
                                 "and severity names like 'PerfHint' are accepted too")
        out.append(entry)
    return frozenset(out)


# ---- the sink ----------------------------------------------------------------------------

class DiagnosticSink:
    """Thread-safe, append-only collection of diagnostics, shared by derived contexts.

    A child sink (``sink.child()``) keeps its own list and forwards to its parent, so one
    compile can report exactly its own findings while an enclosing context still sees all.
    """

    def __init__(self, parent: "DiagnosticSink | None" = None) -> None:
        self._items: list[Diagnostic] = []
        self._lock = threading.Lock()
        self.parent = parent

    def child(self) -> "DiagnosticSink":
        """A sink that also forwards every finding here: one compile's view of an outer sink."""
        return DiagnosticSink(parent=self)

    def add(self, diagnostic: Diagnostic) -> None:
        with self._lock:
            self._items.append(diagnostic)
        if self.parent is not None:
            self.parent.add(diagnostic)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __iter__(self) -> Iterator[Diagnostic]:
        with self._lock:
            return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return True  # an empty sink is still a sink

    def __repr__(self) -> str:
        return f"DiagnosticSink({len(self)} diagnostics)"

    def with_code(self, code: str) -> list[Diagnostic]:
        return [d for d in self if d.code == code]

    def with_severity(self, severity: Severity) -> list[Diagnostic]:
        return [d for d in self if d.severity is severity]

    def log_lines(self) -> list[str]:
        """Log lines in first-seen order; identical findings at one location are merged."""
        counts: dict[Diagnostic, int] = {}
        for d in self:
            counts[d] = counts.get(d, 0) + 1
        return [d.format(n) for d, n in counts.items()]


def summary_line(sink: DiagnosticSink, log_path: str | Path) -> str | None:
    """``ptoc: 1 warning, 3 perf hints, see <log>``, or None when there is nothing to say."""
    counts: dict[Severity, int] = {}
    seen: set[Diagnostic] = set()
    for d in sink:
        if d not in seen:
            seen.add(d)
            counts[d.severity] = counts.get(d.severity, 0) + 1
    words = {Severity.Error: "error", Severity.Warning: "warning",
             Severity.PerfHint: "perf hint", Severity.Info: "note"}
    parts = [f"{counts[s]} {words[s]}{'' if counts[s] == 1 else 's'}" for s in Severity if counts.get(s)]
    if not parts:
        return None
    return f"ptoc: {', '.join(parts)}, see {log_path}"


def write_report(sink: DiagnosticSink, output_dir: str | Path, *,
                 stream: TextIO | None = None) -> Path:
    """Write ``<output_dir>/report/perf_hints.log`` and print one summary line to ``stream``.

    The file is rewritten in full each time (empty when there are no findings), so calling
    this again after later stages added findings is safe. ``stream`` defaults to stderr.
    """
    path = Path(output_dir) / "report" / "perf_hints.log"
    lines = sink.log_lines()
    write_text(path, "".join(line + "\n" for line in lines))
    line = summary_line(sink, path)
    if line is not None and shows(LogLevel.INFO):
        print(line, file=stream if stream is not None else sys.stderr)
    return path


# ---- reporting from a pass ----------------------------------------------------------------

def report_diagnostic(code: str, message: str, *, location: SourceLoc | None = None,
                      severity: Severity | None = None, pass_name: str | None = None,
                      ctx=None) -> Diagnostic | None:
    """Record a finding in the current PassContext's sink; returns it, or None if disabled.

    ``severity`` defaults to the code's registered severity and ``pass_name`` to the pass
    that is running. Unknown codes raise, so every code stays explainable.
    """
    from ptoc.passes.base import current_pass_name
    from ptoc.passes.context import PassContext

    entry = CODES.get(code)
    if entry is None:
        raise PassError(f"diagnostic code {code!r} is not registered",
                        hint="register it with ptoc.passes.diagnostics.register_diagnostic_code")
    ctx = ctx if ctx is not None else PassContext.current()
    if not ctx.is_diagnostic_enabled(code):
        return None
    diagnostic = Diagnostic(code, severity or entry.severity,
                            pass_name or current_pass_name() or entry.rule, message, location)
    ctx.diagnostics.add(diagnostic)
    return diagnostic


# ---- seed codes (explanations are ours; behaviour per reference/pypto-passes.md) ------------

def _seed() -> None:
    ph, warn = Severity.PerfHint, Severity.Warning
    at = "AutoTileMatmulL0"
    register_diagnostic_code(
        "PH001", ph, "TileInnermostDimGranularity", "tile load/store rows are narrower than an L2 line",
        """A tile.load or tile.store moves its tile as many short rows whose innermost dimension is
        below 512 bytes, the L2 cache line of a2a3. Each row then costs a partially used line, so
        the transfer runs well under peak bandwidth. Make the innermost tile dimension (the last
        axis of the tile shape) at least 512 bytes, or reshape the data so that the contiguous axis
        is the long one.""")
    register_diagnostic_code(
        "PH-AT-003", ph, at, "matmul with a sub-byte dtype was not L0-tiled",
        """AutoTileMatmulL0 leaves a matmul alone when an operand or the accumulator has a sub-byte
        element type, because the L0 tile chooser's footprint model is byte-granular. The matmul
        is kept as written, so it must already fit L0A/L0B/L0C. Tile it by hand or use a byte-sized
        dtype if it does not fit.""")
    register_diagnostic_code(
        "PH-AT-005", ph, at, "the L0 tile chooser rejected this matmul",
        """The L0 tile chooser raised an error for this matmul configuration (the message carries
        its text), for example because no legal tile exists under the target's L0 capacities and
        alignments. The matmul was left untouched. Check the shapes and dtypes against the target
        limits, or split the matmul by hand.""")
    register_diagnostic_code(
        "PH-AT-006", ph, at, "matmul output exceeds L0C and no M/N placement applies",
        """The matmul's output tile is larger than L0C, but the pass found no legal way to split
        the output into an M/N grid here: the accumulator belongs to a caller-owned matmul_acc, the
        left operand lives in Vec, the result feeds something other than a store or another
        matmul, the Mat scratch would exceed Mat, or a Bias-resident bias would need an N split.
        The matmul is left as written and will likely fail allocation. Restructure the producer or
        consumer so the result is stored directly, or tile the output by hand.""")
    register_diagnostic_code(
        "PH-AT-007", ph, at, "K is not a multiple of 16",
        """The reduction dimension K of this matmul is not a multiple of 16, the cube unit's K
        granularity, so AutoTileMatmulL0 does not tile it. Pad K to a multiple of 16 (with zeros in
        both operands) to let the pass choose an L0 tile.""")
    register_diagnostic_code(
        "PH-AT-008", ph, at, "the L0 tile chooser fell back to a padded tile",
        """No tile that divides the problem exactly fits the target's L0 buffers, so the chooser
        returned a padded fallback tile. Work is spent on padding rows or columns. Choosing problem
        dimensions that are multiples of the cube fractal sizes avoids the padding.""")
    register_diagnostic_code(
        "PH-AT-009", ph, at, "oversized f32 intermediate needs a narrower Mat scratch",
        """An oversized matmul result is chained into another matmul as a float32 value, but on
        this backend the Mat scratch used to stage it must be bf16 or fp16. The pass cannot split
        the output. Cast the intermediate to bf16/fp16 (rint mode) before it is consumed, or keep
        it small enough to fit L0C.""")
    register_diagnostic_code(
        "PH-AT-010", ph, at, "cast after matmul could not be folded into FIXPIPE",
        """A cast of a matmul result could not be folded into the FIXPIPE drain, because its source
        is not float32 or its rounding mode is not rint. The cast then runs as a separate vector
        conversion, which costs an extra pass over the data. Use mode='rint' on an f32 result to
        get the free conversion.""")
    register_diagnostic_code(
        "PH-AT-011", ph, at, "biased matmul cannot form a legal Bias window",
        """A matmul with bias could not be tiled because no legal Bias-buffer window exists: the
        dtype pair is unsupported, the left operand is not in Mat, the bias is misaligned or too
        large for the Bias buffer, the bias is not a plain load, or its value crosses a side
        effect. Load the bias directly before the matmul with a supported dtype and size.""")
    register_diagnostic_code(
        "PH-MR-001", ph, "MemoryReuse", "software pipelining depth reduced to fit the memory space",
        """A pipelined loop asked for D buffers per stage in a memory space, but only F < D of them
        fit next to everything else that is live, so stages F apart now share storage and the
        pipeline overlaps less than requested. Reduce the tile size or the stage count, or free
        space in that memory space, to get the full depth back.""")
    register_diagnostic_code(
        "W-MR-001", warn, "MemoryReuse", "capacity-gated reuse fell back to legacy packing",
        """The capacity gate of MemoryReuse could not fit the memory space at any double-buffering
        depth, so buffers were packed with the legacy rule that only keeps Mat/Vec loads apart.
        Pipeline overlap is reduced and, if the legacy packing overflows too, allocation fails
        next. Reduce tile sizes or the pipeline stage count. (ptoc-specific code; PyPTO emits
        this warning without a code.)""")
    register_diagnostic_code(
        "PH-DSA-001", ph, "AllocateMemoryAddr", "DSA-RP relaxed some pipeline buffer separations",
        """Under the DSA_RP planner the strict search could not keep every software-pipeline
        buffer in its own storage, so some pipeline-only separations were relaxed and those
        buffers reuse physical storage. The program is correct but overlaps less. Shrink tiles or
        stages, or use the PYPTO planner.""")
    register_diagnostic_code(
        "PH-SYNC-001", ph, "InsertSync", "event ids ran out; a full pipe barrier was used",
        """Synchronisation between two pipes needed more than the 8 hardware event ids available
        for that pipe pair, so a barrier(PIPE_ALL) was inserted instead of a set/wait pair. The
        barrier stalls every pipe and removes overlap. Fewer simultaneously live buffers crossing
        the same pipe pair (smaller pipelining depth) avoid it. (ptoc-specific code.)""")


_seed()
