"""The memory map as one self-contained HTML page (inline CSS and SVG, no script, no network).

Layout (fixed, so a screenshot can be checked region by region): a page header, then the six
panels in a grid of ``COLUMNS`` columns, each ``PANEL_W`` x ``PANEL_H`` pixels with a header
bar in the space's own colour; address runs across (0 .. capacity), program order runs
down. Rectangles are tinted in the space's colour and labelled with their tiles; the byte x
lifetime overlap of two rectangles of different storage is drawn in ``CONFLICT_RED``, and a
space used to 95 % or more gets a red pill. The legend and a totals table follow the panels.
"""

from __future__ import annotations

from html import escape

from ptoc.dtypes import MemorySpace
from ptoc.report.memmap_model import FULL_THRESHOLD, KernelMemoryMap, SpacePanel

#: Distinct panel colours (none of them red: red is reserved for conflicts).
SPACE_COLOURS: dict[MemorySpace, str] = {
    MemorySpace.Mat: "#1f5fbf",
    MemorySpace.Left: "#2e9e3e",
    MemorySpace.Right: "#8a3fbf",
    MemorySpace.Acc: "#f08c00",
    MemorySpace.Bias: "#7a5230",
    MemorySpace.Vec: "#0fa3b1",
}
SPACE_ALIASES = {MemorySpace.Mat: "L1", MemorySpace.Left: "L0A", MemorySpace.Right: "L0B",
                 MemorySpace.Acc: "L0C", MemorySpace.Bias: "BT", MemorySpace.Vec: "UB"}
CONFLICT_RED = "#e00000"

MARGIN = 20
PAGE_HEADER_H = 110
COLUMNS = 3
PANEL_W = 560
PANEL_H = 500
PANEL_BAR_H = 44
GAP = 20
_PLOT_LEFT, _PLOT_RIGHT, _PLOT_TOP, _PLOT_BOTTOM = 56, 30, 24, 14


def panel_box(index: int) -> tuple[int, int, int, int]:
    """(left, top, width, height) of panel ``index`` in page pixels."""
    row, col = divmod(index, COLUMNS)
    return (MARGIN + col * (PANEL_W + GAP), PAGE_HEADER_H + row * (PANEL_H + GAP),
            PANEL_W, PANEL_H)


def page_size(n_panels: int = 6) -> tuple[int, int]:
    """(width, height) that shows every panel and the legend."""
    rows = -(-n_panels // COLUMNS)
    return (2 * MARGIN + COLUMNS * PANEL_W + (COLUMNS - 1) * GAP,
            PAGE_HEADER_H + rows * (PANEL_H + GAP) + 420)


def _kib(n: int) -> str:
    return f"{n / 1024:.1f} KiB" if n % 1024 else f"{n // 1024} KiB"


def _tint(colour: str, amount: float) -> str:
    """``colour`` mixed with white (amount 1 = white)."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    mix = [round(c + (255 - c) * amount) for c in (r, g, b)]
    return "#" + "".join(f"{c:02x}" for c in mix)


def render_memory_map(mm: KernelMemoryMap) -> str:
    """The HTML text of ``mm``."""
    width, height = page_size(len(mm.panels))
    parts = [_HEAD.format(title=escape(f"memory map: {mm.kernel}"), width=width,
                          height=height, pw=PANEL_W, ph=PANEL_H, bar=PANEL_BAR_H,
                          red=CONFLICT_RED, header=PAGE_HEADER_H, margin=MARGIN)]
    n_conf = len(mm.conflicts)
    status = (f'<span class="bad">{n_conf} conflict(s)</span>' if n_conf
              else '<span class="ok">no conflicts</span>')
    parts.append(f'<header><h1>Memory map of kernel <code>{escape(mm.kernel)}</code></h1>'
                 f'<p>target {escape(mm.target)} · {mm.positions} program positions'
                 f'{" · " + escape(mm.source) if mm.source else ""} · {status}</p>'
                 f'<p class="hint">address across (0 … capacity), program order down; '
                 f'hover a rectangle for its tiles, bytes, lifetime and source.</p></header>')
    for index, panel in enumerate(mm.panels):
        parts.append(_panel(panel, index, mm.positions))
    top = PAGE_HEADER_H + (-(-len(mm.panels) // COLUMNS)) * (PANEL_H + GAP)
    parts.append(f'<footer style="top:{top}px">{_legend()}{_totals(mm)}</footer>')
    parts.append("</body></html>\n")
    return "".join(parts)


def _panel(panel: SpacePanel, index: int, positions: int) -> str:
    left, top, w, h = panel_box(index)
    colour = SPACE_COLOURS[panel.space]
    name = panel.space.value
    pill_cls = "pill full" if panel.full else "pill"
    cap = _kib(panel.capacity) if panel.capacity else "no capacity on this target"
    pct = f"{100 * panel.usage:.1f} %" if panel.capacity else "–"
    out = [f'<section class="panel" id="panel-{name}" data-space="{name}" '
           f'data-full="{str(panel.full).lower()}" data-conflicts="{len(panel.conflicts)}" '
           f'style="left:{left}px;top:{top}px">'
           f'<div class="bar" style="background:{colour}">'
           f'<b>{name}</b> ({SPACE_ALIASES[panel.space]}) · {len(panel.buffers)} buffer(s) · '
           f'cap {cap}<span class="{pill_cls}" title="highest byte used / capacity'
           f'{" (≥ 95 %)" if panel.full else ""}">{pct}</span></div>']
    pw, ph = w, h - PANEL_BAR_H
    out.append(f'<svg width="{pw}" height="{ph}" viewBox="0 0 {pw} {ph}" '
               f'xmlns="http://www.w3.org/2000/svg">')
    x0, y0 = _PLOT_LEFT, _PLOT_TOP
    aw, ah = pw - _PLOT_LEFT - _PLOT_RIGHT, ph - _PLOT_TOP - _PLOT_BOTTOM
    out.append(f'<rect class="plot" x="{x0}" y="{y0}" width="{aw}" height="{ah}" '
               f'fill="{_tint(colour, 0.94)}" stroke="{colour}"/>')
    cap_px = panel.capacity or max(panel.high_water, 1)
    span = max(positions, 1)

    def sx(addr: int) -> float:
        return x0 + aw * min(addr, cap_px) / cap_px

    def sy(pos: float) -> float:
        return y0 + ah * (pos - 0.5) / span if span > 1 else y0

    for frac in (0, 0.25, 0.5, 0.75, 1):
        x = x0 + aw * frac
        out.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y0 + ah}" class="grid"/>'
                   f'<text x="{x:.1f}" y="{y0 - 6}" class="tick" text-anchor="middle">'
                   f'{_kib(int(cap_px * frac)) if frac else "0"}</text>')
    for frac in (0, 0.5, 1):
        pos = max(1, round(span * frac))
        out.append(f'<text x="{x0 - 6}" y="{sy(pos) + 4:.1f}" class="tick" '
                   f'text-anchor="end">#{pos}</text>')
    if panel.capacity and panel.high_water > panel.capacity:
        out.append(f'<text x="{x0 + aw - 4}" y="{y0 + 14}" class="over" text-anchor="end">'
                   f'overflow: {_kib(panel.high_water)} &gt; {_kib(panel.capacity)}</text>')
    if not panel.buffers:
        out.append(f'<text x="{x0 + aw / 2}" y="{y0 + ah / 2}" class="empty" '
                   f'text-anchor="middle">no buffers</text>')
    fill, stroke = _tint(colour, 0.55), colour
    for b in panel.buffers:
        x, y = sx(b.addr), sy(b.start)
        bw = max(sx(b.hi) - x, 1.5)
        bh = max(sy(b.end + 1) - y, 3)
        names = " ".join(b.names)
        shown = " ".join("%" + n for n in b.names)   # PTO spelling of the tile values
        tip = (f"{', '.join('%' + n for n in b.names)}\n{name} [{b.addr:#x}, {b.hi:#x}) = {b.nbytes} B\n"
               f"live positions {b.start}..{b.end}\nstorage {b.storage}")
        for t in b.tiles:
            where = f"PTO line {t.line}" + (f", DSL {t.loc}" if t.loc is not None else "")
            tip += f"\n  %{t.name}: {where}"
        cls = "buf" + (" conflicted" if b.conflict else "") + (" view" if b.view else "")
        out.append(f'<g class="{cls}" data-tiles="{escape(names)}" data-addr="{b.addr}" '
                   f'data-size="{b.nbytes}" data-start="{b.start}" data-end="{b.end}">'
                   f'<title>{escape(tip)}</title><rect x="{x:.1f}" y="{y:.1f}" '
                   f'width="{bw:.1f}" height="{bh:.1f}" fill="{fill}" stroke="{stroke}"/>')
        if bh >= 11 and bw >= 24:
            label = shown if len(shown) * 6 < bw else shown[:max(int(bw / 6) - 1, 1)] + "…"
            out.append(f'<text x="{x + 3:.1f}" y="{y + 10:.1f}" class="label">'
                       f'{escape(label)}</text>')
        out.append("</g>")
    for c in panel.conflicts:
        x, y = sx(c.lo), sy(c.start)
        cw, ch = max(sx(c.hi) - x, 2), max(sy(c.end + 1) - y, 3)
        tip = (f"conflict: %{', %'.join(c.a.names)} and %{', %'.join(c.b.names)} share bytes "
               f"[{c.lo:#x}, {c.hi:#x}) while both live (positions {c.start}..{c.end})")
        out.append(f'<rect class="conflict" x="{x:.1f}" y="{y:.1f}" width="{cw:.1f}" '
                   f'height="{ch:.1f}" fill="{CONFLICT_RED}" fill-opacity="0.85">'
                   f'<title>{escape(tip)}</title></rect>')
    out.append("</svg></section>")
    return "".join(out)


def _legend() -> str:
    items = "".join(f'<span class="key"><i style="background:{c}"></i>{s.value} '
                    f'({SPACE_ALIASES[s]})</span>' for s, c in SPACE_COLOURS.items())
    return (f'<div class="legend"><b>Legend</b> {items}'
            f'<span class="key"><i style="background:{CONFLICT_RED}"></i>conflict: two '
            f'buffers of different storage share bytes while both live</span>'
            f'<span class="key"><i class="dash"></i>view: a window inside a live buffer of '
            f'the same storage</span><span class="key"><span class="pill full">95 %</span> '
            f'highest byte used ≥ {int(FULL_THRESHOLD * 100)} % of capacity</span></div>')


def _totals(mm: KernelMemoryMap) -> str:
    rows = []
    for p in mm.panels:
        tiles = sum(len(b.tiles) for b in p.buffers)
        flag = ' class="bad"' if p.full or p.conflicts else ""
        rows.append(f'<tr{flag}><td>{p.space.value}</td><td>{tiles}</td>'
                    f'<td>{len(p.buffers)}</td><td>{p.peak_live}</td><td>{p.high_water}</td>'
                    f'<td>{p.capacity}</td><td>{100 * p.usage:.1f} %</td>'
                    f'<td>{len(p.conflicts)}</td></tr>')
    all_tiles = sum(len(b.tiles) for p in mm.panels for b in p.buffers)
    rows.append(f'<tr class="sum"><td>total</td><td>{all_tiles}</td>'
                f'<td>{sum(len(p.buffers) for p in mm.panels)}</td>'
                f'<td>{sum(p.peak_live for p in mm.panels)}</td>'
                f'<td>{sum(p.high_water for p in mm.panels)}</td>'
                f'<td>{sum(p.capacity for p in mm.panels)}</td><td></td>'
                f'<td>{len(mm.conflicts)}</td></tr>')
    unplaced = (f'<p class="bad">tiles without an address (not drawn): '
                f'{escape(", ".join(mm.unplaced))}</p>' if mm.unplaced else "")
    return ('<table class="totals"><tr><th>space</th><th>tiles</th><th>rectangles</th>'
            '<th>peak live B</th><th>highest byte B</th><th>capacity B</th><th>usage</th>'
            '<th>conflicts</th></tr>' + "".join(rows) + "</table>" + unplaced)


_HEAD = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
html, body {{ margin: 0; padding: 0; background: #ffffff; }}
body {{ font: 13px/1.35 "DejaVu Sans", Arial, sans-serif; color: #222; position: relative;
        width: {width}px; min-height: {height}px; }}
header {{ position: absolute; left: {margin}px; top: 0; height: {header}px; }}
header h1 {{ font-size: 20px; margin: 12px 0 4px; }}
header p {{ margin: 2px 0; }}
.hint {{ color: #666; }}
.panel {{ position: absolute; width: {pw}px; height: {ph}px; box-sizing: border-box;
          border: 1px solid #bbb; background: #fff; overflow: hidden; }}
.bar {{ height: {bar}px; line-height: {bar}px; color: #fff; padding: 0 10px;
        font-size: 14px; white-space: nowrap; }}
.pill {{ float: right; margin-top: 10px; line-height: 22px; padding: 0 9px;
         border-radius: 11px; background: rgba(255,255,255,.92); color: #222; font-weight: bold; }}
.pill.full {{ background: {red}; color: #fff; }}
svg text {{ font: 11px "DejaVu Sans", Arial, sans-serif; }}
.tick {{ fill: #555; }} .grid {{ stroke: #ccc; stroke-dasharray: 2 3; }}
.label {{ fill: #111; }} .empty {{ fill: #888; font-size: 14px; }}
.over {{ fill: {red}; font-weight: bold; }}
.buf.view rect {{ stroke-dasharray: 4 2; }}
.buf.conflicted rect {{ stroke: {red}; stroke-width: 2; }}
footer {{ position: absolute; left: {margin}px; }}
.legend .key {{ margin-right: 14px; white-space: nowrap; }}
.legend i {{ display: inline-block; width: 12px; height: 12px; margin: 0 4px -2px 6px; }}
.legend i.dash {{ border: 1px dashed #333; width: 10px; height: 10px; }}
.legend .pill {{ float: none; }}
.totals {{ border-collapse: collapse; margin-top: 12px; }}
.totals td, .totals th {{ border: 1px solid #ccc; padding: 3px 10px; text-align: right; }}
.totals td:first-child {{ text-align: left; }}
.bad {{ color: {red}; font-weight: bold; }} .ok {{ color: #2e7d32; }}
.sum td {{ font-weight: bold; }}
</style></head><body>
"""
