"""Checking the chooser's dbC choice against the simulator, for the decisions report.

The L0 tile chooser is PyPTO's algorithm with PyPTO's constants, and must stay so: its
closed-form wall assumes every drain but one hides under the next tile's MADs. Whether the
emitted kernel realises that is a different question (tail tiles on one buffer, loop seams,
an MTE1-bound moving panel). When a compile takes dbC=2 on the chooser's word, this check
compiles the same program without it, times both kernels on the simulator (timing only,
the target's default profile) and writes the simulated speed-up next to the model's into the
``dbc`` decision — and says so in the summary when the two disagree in direction.

It runs only under the PYPTO planner with ``enable_pypto_l0c_double_buffer`` on, where the
flag-off compile is the exact single-accumulator baseline; under PTOAS and DSA_RP dbC is
automatic and no baseline compile exists (``ptoc compile --what-if`` is PYPTO-only too).
"""

from __future__ import annotations

import tempfile

from ptoc.errors import PtocError


def chooser_dbc_decisions(log) -> list:
    """The dbC decisions the chooser itself accepted (not the flag or pipeline gates)."""
    return [d for d in log.of_kind("dbc")
            if d.fields.get("gate") == "chooser" and d.fields.get("accepted")]


def kernel_cycles(modules: dict, target: str, profile=None) -> float | None:
    """Core cycles of every kernel of the Level-3 ``modules`` (by name), once each, timed
    without numerics (None if one needs scalar arguments the check cannot invent); a core
    group's wall counts once."""
    from ptoc.sim.group import is_group_module, simulate_group
    from ptoc.sim.inputs import random_inputs
    from ptoc.sim.retime import build_stream, retime
    from ptoc.backend import get_profile

    prof = get_profile(profile, target=target)
    total = 0.0
    for name, module in modules.items():
        group = is_group_module(module)
        try:
            tensors = random_inputs(list(module.kernels) if group else module.kernel(name))
        except PtocError:
            return None
        if group:   # a mixed kernel: its AIC and AIVs together (the cores wait on each other)
            total += simulate_group(module, tensors, target=target, profile=prof,
                                    mode="fast").wall_cycles
            continue
        total += retime(build_stream(module, tensors, target=target, kernel=name),
                        prof).wall_cycles
    return total


def check_chooser_dbc(program, modules: dict, target: str, log, *,
                      platform: str) -> None:
    """Annotate each chooser-accepted dbC decision of ``log`` with the simulated speed-up."""
    from ptoc.backend import get_target
    from ptoc.runtime.compile import compile_ir

    accepted = chooser_dbc_decisions(log)
    if not accepted:
        return
    profile = get_target(target).default_profile
    with tempfile.TemporaryDirectory(prefix="ptoc_dbc_check_") as tmp:
        baseline = compile_ir(program, tmp, platform=platform, memory_planner="PYPTO",
                              enable_pypto_l0c_double_buffer=False, dump_passes=False,
                              check_dbc=False)
        off = kernel_cycles({name: baseline.pto_module(name) for name in baseline.pto_text},
                            target, profile)
    on = kernel_cycles(modules, target, profile)
    if not off or not on:
        return
    simulated = off / on
    for d in accepted:
        single, dual = d.fields.get("single_wall_cycles"), d.fields.get("dbc_wall_cycles")
        model = single / dual if single and dual else None
        d.fields.update(simulated_speedup=round(simulated, 4), simulated_profile=profile,
                        simulated_cycles={"dbc_off": round(off, 1), "dbc_on": round(on, 1)},
                        model_speedup=round(model, 4) if model else None)
        if model is not None and (model > 1) != (simulated > 1):
            d.fields["model_disagrees"] = (
                f"PyPTO's cost model predicts {model:.2f}x for dbC=2, but the compiled program "
                f"simulates at {simulated:.2f}x on {profile} ({off:.0f} -> {on:.0f} cycles "
                f"without and with the flag); compile this program with "
                f"enable_pypto_l0c_double_buffer off")
