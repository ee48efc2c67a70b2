"""Decision records of AutoTileMatmulL0: the tile choice with its runners-up, and the dbC gate.

Kept out of the pass modules so that each hook there is one call. Everything here runs only
while a compile is collecting decisions (``decisions.is_recording()``); it re-runs the
chooser's ranking once (``L0TileRanking``) and converts only the points it reports.
"""

from __future__ import annotations

from dataclasses import fields

from ptoc.errors import PtocError
from ptoc.passes.decisions import is_recording, record_decision

PASS = "AutoTileMatmulL0"
TOP = 5


def _candidate(c) -> dict:
    d = {f.name: getattr(c, f.name) for f in fields(c)}   # plain values: no deep copy needed
    d["stationarity"] = c.stationarity.name
    return d


def _first(ranking, shown: list, double_buffer_c: bool):
    """The best point with (without) dbC: the first such point of ``shown`` (a head of the
    ranking, or of its single-accumulator points) when it has one, else asked for."""
    for c in shown:
        if c.double_buffer_c is double_buffer_c:
            return c
    return next(iter(ranking.top(1, double_buffer_c)), None)


def _tile(r) -> str:
    return f"(m, n, k) = ({r.m}, {r.n}, {r.k})"


def record_tile_choice(site, result, target, ctx, *, note: str | None = None,
                       force_output_stationary: bool = False) -> None:
    """The chooser's pick for ``site``, its top alternatives, then the dbC decision (a
    ``note`` marks a later re-choice, e.g. the PYPTO Mat-scratch output-stationary rule)."""
    if not is_recording():
        return
    from ptoc.passes.auto_tile_analysis import allow_double_buffer_c, chooser_config
    from ptoc.passes.l0_tile_chooser import L0TileRanking

    allowed = allow_double_buffer_c(ctx)
    # One ranking serves the table and the dbC probe: with the gate closed, rank as if it
    # were open; the points without dbC are then exactly the closed gate's, in its order.
    cfg = chooser_config(site, target, ctx, force_output_stationary=force_output_stationary,
                         double_buffer_c=True)
    try:
        ranking = L0TileRanking.of(cfg)
    except PtocError:
        ranking = None
    shown = [] if ranking is None else ranking.top(TOP, None if allowed else False)
    best_dbc, best_single = (None, None) if ranking is None else (
        _first(ranking, shown, True), _first(ranking, shown, False))
    alternatives = [_candidate(c) for c in shown]
    summary = (f"{site.describe()}: {_tile(result)}, {result.stationarity.name}, "
               f"dbC={'2' if result.double_buffer_c else '1'}, estimated wall "
               f"{result.estimated_cost_cycles} cycles")
    if note:
        summary += f" ({note})"
    record_decision("tile_choice", summary, pass_name=PASS, location=site.loc,
                    matmul=site.result.name, M=site.M, N=site.N, K=site.K, m=result.m,
                    n=result.n, k=result.k, stationarity=result.stationarity,
                    double_buffer_c=result.double_buffer_c,
                    estimated_cost_cycles=result.estimated_cost_cycles,
                    tiles=-(-site.M // result.m) * -(-site.N // result.n),
                    note=note, alternatives=alternatives)
    if note is None:
        _record_dbc(site, result, ctx, allowed, best_dbc, best_single)


def _record_dbc(site, result, ctx, allowed: bool, best_dbc, best_single) -> None:
    walls = {"dbc_wall_cycles": best_dbc.wall_cycles if best_dbc else None,
             "single_wall_cycles": best_single.wall_cycles if best_single else None}
    if not allowed:
        gate = "flag"
        reason = (f"memory_planner={ctx.memory_planner.name} and "
                  "enable_pypto_l0c_double_buffer is off (dbC is opt-in under PYPTO)")
        if best_dbc is not None and best_single is not None \
                and best_dbc.wall_cycles < best_single.wall_cycles:
            reason += (f"; with the flag the chooser would pick dbC=2 at an estimated "
                       f"{best_dbc.wall_cycles} vs {best_single.wall_cycles} cycles")
        accepted = False
    elif result.double_buffer_c:
        gate, accepted = "chooser", True
        reason = (f"dbC=2 estimated wall {result.estimated_cost_cycles} is strictly lower than "
                  f"the best single-accumulator wall "
                  f"{best_single.wall_cycles if best_single else '?'}")
    else:
        gate, accepted = "chooser", False
        whole = best_single is not None and (best_single.m, best_single.n, best_single.k) == (
            site.M, site.N, site.K)
        if whole:
            reason = "the whole matmul fits L0 as one tile: no drain to overlap"
        elif best_dbc is None:
            reason = ("no legal dbC=2 tile (needs k = K, two tiles on the moving axis and half "
                      "of L0C per accumulator)")
        else:
            reason = (f"the best dbC=2 tile ({best_dbc.m}, {best_dbc.n}, {best_dbc.k}) is "
                      f"estimated at {best_dbc.wall_cycles} cycles, not below "
                      f"{result.estimated_cost_cycles}")
    record_decision("dbc", f"{site.describe()}: dbC {'accepted' if accepted else 'rejected'} "
                    f"by the {gate} gate", pass_name=PASS, location=site.loc,
                    matmul=site.result.name, accepted=accepted, gate=gate, reason=reason,
                    **walls)


def record_placement_fallback(site, single) -> None:
    """dbC chosen for an output that fits L0C, but no grid placement exists (§3.4)."""
    if not is_recording():
        return
    record_decision("dbc", f"{site.describe()}: dbC rejected by the placement gate",
                    pass_name=PASS, location=site.loc, matmul=site.result.name, accepted=False,
                    gate="placement",
                    reason="the output fits L0C and was split only to double-buffer it, but the "
                           "result has no direct-store or Mat-scratch placement; kept one "
                           "accumulator" + (f", tile {_tile(single)}" if single else ""))


def record_pipeline_dbc(loop, accepted: bool, gate: str, reason: str, **fields) -> None:
    """A user ``pl.pipeline`` loop qualified for dbC (§3.6); which gate settled it."""
    if not is_recording():
        return
    record_decision("dbc", f"pipeline loop over {loop.loop_var.name}: dbC "
                    f"{'accepted' if accepted else 'rejected'} by the {gate} gate",
                    pass_name=PASS, location=getattr(loop, "loc", None), loop=loop.loop_var.name,
                    accepted=accepted, gate=gate, reason=reason, **fields)
