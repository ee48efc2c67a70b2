"""``ptoc compile --what-if dbc``: simulate the dbC alternative a compile did not take.

The alternative is the same program with the dbC flag flipped (off -> on, on -> off) under
the PYPTO planner; the other planners decide dbC themselves, so there is nothing to flip.
Both compiles run on the simulator with the same seeded inputs; the report gives each one's
cycles, Acc buffers and the delta (negative: the alternative is faster).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ptoc.errors import PtocError
from ptoc.files import write_json


class WhatIfError(PtocError):
    """The what-if cannot be evaluated for this compile."""


@dataclass
class Side:
    label: str
    dbc_flag: bool
    cycles: float
    acc_buffers: int
    races: int
    output_dir: Path


@dataclass
class WhatIfReport:
    taken: Side
    alternative: Side
    decisions: list

    @property
    def delta(self) -> float:
        """Alternative minus taken cycles (negative: the alternative would be faster)."""
        return self.alternative.cycles - self.taken.cycles

    @property
    def races(self) -> int:
        return self.taken.races + self.alternative.races

    def lines(self) -> list[str]:
        t, a = self.taken, self.alternative
        pct = 100.0 * self.delta / t.cycles if t.cycles else 0.0
        out = ["what-if dbc:"]
        for s in (t, a):
            out.append(f"  {s.label:<12} dbC flag {'on ' if s.dbc_flag else 'off'}  "
                       f"{s.cycles:10.0f} cycles  {s.acc_buffers} Acc buffer(s)  "
                       f"{s.races} race(s)  {s.output_dir}")
        verdict = ("faster" if self.delta < 0 else "slower" if self.delta > 0 else "the same")
        out.append(f"  delta        {self.delta:+.0f} cycles ({pct:+.1f} %): the alternative "
                   f"is {verdict}")
        for d in self.decisions:
            out.append(f"  decided by {d.get('gate')}: {d.get('reason')}")
        return out


def what_if_dbc(loaded, args, compiled) -> WhatIfReport:
    """Compile the flipped-flag alternative next to ``compiled`` and simulate both."""
    import json

    from ptoc.dtypes import MemorySpace
    from ptoc.passes import MemoryPlanner
    from ptoc.runtime import RunConfig
    from ptoc.tools.compile_cmd import compile_loaded
    from ptoc.tools.run_cmd import entry_tensors

    if compiled.memory_planner is not MemoryPlanner.PYPTO:
        raise WhatIfError(f"--what-if dbc needs the PYPTO planner; under "
                          f"{compiled.memory_planner.name} dbC is decided automatically",
                          hint="drop --planner ptoas")
    flag = bool(compiled.enable_pypto_l0c_double_buffer)
    alt_dir = Path(compiled.output_dir) / f"what_if_dbc_{'off' if flag else 'on'}"
    alternative = compile_loaded(loaded, args, alt_dir, dbc=not flag)
    tensors = entry_tensors(compiled, args.seed, loaded.example_args)
    config = RunConfig(platform=compiled.target, sim_mode=args.sim_mode)

    def side(label, c, dbc) -> Side:
        result = c.run(*[v.copy() if hasattr(v, "copy") else v for v in tensors.values()],
                       config=config)
        return Side(label, dbc, result.cycles, len(c.allocations_in(MemorySpace.Acc)),
                    len(result.races), Path(c.output_dir))

    taken = side("compiled", compiled, flag)
    other = side("alternative", alternative, not flag)
    path = Path(compiled.output_dir) / "report" / "decisions.json"
    decisions = [d for d in json.loads(path.read_text())["decisions"] if d["kind"] == "dbc"] \
        if path.is_file() else []
    report = WhatIfReport(taken, other, decisions)
    write_json(Path(compiled.output_dir) / "report" / "what_if_dbc.json", {
        "taken": {"dbc_flag": flag, "cycles": taken.cycles, "acc_buffers": taken.acc_buffers},
        "alternative": {"dbc_flag": not flag, "cycles": other.cycles,
                        "acc_buffers": other.acc_buffers, "output_dir": str(alt_dir)},
        "delta_cycles": report.delta}, indent=2)
    return report
