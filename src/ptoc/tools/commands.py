"""Registers the ``ptoc`` subcommands; each handler lives in its own module."""

from __future__ import annotations


def doc_paragraph(doc: str, index: int = 1, *, join_lines: bool = True) -> str:
    """Paragraph ``index`` of a module docstring as ``--help`` text: the reST double backticks
    that read well in the source are dropped, since a terminal shows them literally."""
    text = doc.split("\n\n")[index].strip().replace("``", "")
    return " ".join(text.split("\n")) if join_lines else text


def platform_names() -> list[str]:
    """Every name ``--platform`` accepts: the simulator platforms first, then the aliases."""
    from ptoc.backend import TARGETS

    first = [t.platforms[0] for t in TARGETS.values()]
    rest = [n for t in TARGETS.values() for n in (t.name, *t.platforms[1:])]
    return first + rest


def register(sub) -> None:
    from ptoc.tools import demo

    demo.register(sub)
    from ptoc.tools import sim_cmd

    sim_cmd.register(sub)
    from ptoc.tools import memmap

    memmap.register(sub)
    from ptoc.tools import trace_bundle

    trace_bundle.register(sub)
    from ptoc.tools import bench_cmd, calibrate_cmd, compile_cmd, explain_cmd, pypto_cmd, run_cmd

    compile_cmd.register(sub)
    run_cmd.register(sub)
    explain_cmd.register(sub)
    bench_cmd.register(sub)
    pypto_cmd.register(sub)
    calibrate_cmd.register(sub)
