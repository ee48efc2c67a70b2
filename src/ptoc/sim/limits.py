"""How much one simulation may do: dynamic instructions, scalar steps and memory.

Why: the simulator unrolls every loop into records it keeps, so a kernel that is too large
(or a loop bound with a typo) must end early with the numbers and the fix — never run for
minutes, exhaust memory, or be reported as a ptoc bug. Three guards, all from one
``SimLimits``:

* before anything is built, a static estimate of the kernel (``ptoc.sim.core.estimate``)
  is checked against the limits;
* while the scalar unit runs, it counts instructions and scalar steps (loop iterations and
  the ops they execute, pipe instructions or not) and stops at the limit;
* a ``MemoryError`` anywhere in the run becomes a ``SimLimitError`` with the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.sim.errors import SimLimitError

#: Simulator memory per dynamic instruction (its record, schedule slots, race history and
#: result record): measured ~570 B on ``k_loop_sum`` (2^18 trips) and ~790 B on a
#: ``dbuf_matmul`` GEMM (``ptoc.sim.examples``).
BYTES_PER_INSTRUCTION = 800


@dataclass(frozen=True)
class SimLimits:
    """``max_instructions`` pipe instructions and ``max_scalar_steps`` scalar steps per
    kernel run; ``max_bytes`` of simulator memory plus bound tensors per run."""

    max_instructions: int = 5_000_000
    max_scalar_steps: int = 20_000_000
    max_bytes: int = 8 << 30


DEFAULT_LIMITS = SimLimits()


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} TiB"


def memory_bytes(instructions: int, tensor_bytes: int) -> int:
    """Simulator memory for ``instructions`` records plus the bound tensors."""
    return instructions * BYTES_PER_INSTRUCTION + tensor_bytes


def check(what: str, limits: SimLimits, *, instructions: int, scalar_steps: int,
          memory: int, detail: str = "", loc=None) -> None:
    """Raise ``SimLimitError`` when an estimate exceeds ``limits``; ``what`` names the run,
    ``detail`` says where the numbers come from."""
    over = []
    if instructions > limits.max_instructions:
        over.append(f"{instructions:,} pipe instructions (limit {limits.max_instructions:,})")
    if scalar_steps > limits.max_scalar_steps:
        over.append(f"{scalar_steps:,} scalar steps (limit {limits.max_scalar_steps:,})")
    if memory > limits.max_bytes:
        over.append(f"{human_bytes(memory)} of memory (limit {human_bytes(limits.max_bytes)}, "
                    f"at {BYTES_PER_INSTRUCTION} B per instruction plus the tensors)")
    if over:
        raise SimLimitError(
            f"{what} would need about {' and '.join(over)}" + (f"; {detail}" if detail else ""),
            loc, hint="simulate a smaller problem (fewer loop trips, smaller shapes), or raise "
                      "the limit with SimLimits(...) in simulate(limits=...) or "
                      "RunConfig(sim_limits=...)")
