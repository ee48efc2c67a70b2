"""A benchmark result table: printed for people, written as JSON so runs can be compared."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Table:
    """One table: ``rows`` are lists aligned with ``columns``; ``notes`` print underneath."""

    name: str
    title: str
    columns: list[str]
    rows: list[list] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *values) -> None:
        assert len(values) == len(self.columns), (values, self.columns)
        self.rows.append(list(values))

    def render(self) -> str:
        cells = [[_fmt(v) for v in row] for row in self.rows]
        widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(self.columns)]
        line = lambda vals: "  ".join(v.rjust(w) for v, w in zip(vals, widths))  # noqa: E731
        out = [self.title, line(self.columns), line(["-" * w for w in widths])]
        out += [line(r) for r in cells]
        out += [f"  {n}" for n in self.notes]
        return "\n".join(out)

    def to_json(self) -> dict:
        return {"name": self.name, "title": self.title, "columns": self.columns,
                "rows": [[_plain(v) for v in row] for row in self.rows], "notes": self.notes}


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 100:
            return f"{v:,.0f}"
        if abs(v) >= 1:
            return f"{v:.2f}"
        return f"{v:.3g}"
    if isinstance(v, int):
        return f"{v:,}"
    return "-" if v is None else str(v)


def _plain(v):
    if hasattr(v, "item"):
        return v.item()
    return v


def cli(run, doc: str, ints: tuple[str, ...] = ()) -> None:
    """Run a benchmark script from the command line: ``--quick``, plus one integer option
    per name in ``ints`` passed to ``run`` by that name; print every table."""
    import argparse

    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    for name in ints:
        ap.add_argument(f"--{name}", type=int)
    args = ap.parse_args()
    options = {name: getattr(args, name) for name in ints}
    for table in run(quick=args.quick, **options):
        print(table.render())
        print()
