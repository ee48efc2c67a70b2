"""Registers the ``ptoc`` subcommands; each handler lives in its own module."""

from __future__ import annotations


def register(sub) -> None:
    from ptoc.tools import demo

    demo.register(sub)
    from ptoc.tools import sim_cmd

    sim_cmd.register(sub)
    from ptoc.tools import memmap

    memmap.register(sub)
    from ptoc.tools import trace_bundle

    trace_bundle.register(sub)
    from ptoc.tools import bench_cmd, compile_cmd, explain_cmd, pypto_cmd, run_cmd

    compile_cmd.register(sub)
    run_cmd.register(sub)
    explain_cmd.register(sub)
    bench_cmd.register(sub)
    pypto_cmd.register(sub)
