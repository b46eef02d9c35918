"""The device mesh, drawn: every rank a cell in its node's row, coloured by one axis; the MoE mesh per stage.

Formatting only: where each rank sits and which groups it joins come from `assistant/validator/ranks.py`
(upstream's order). One picture for every front end: the web chat and Validate tab show it, the CLI and
the Slack bot write it as PNG (or SVG). It is laid out as a `Scene` in inches (ui/plots/scene.py), so
sizes below read as what they are, and rendered by Pillow (PNG) or matplotlib (SVG).
"""
from __future__ import annotations

import os
import uuid
from functools import cache
from pathlib import Path

from assistant.datafile import read_yaml
from assistant.defaults import DEFAULT_GPUS_PER_NODE
from assistant.validator.ranks import (RankMesh, block_crossings, colour_axes, moe_mesh, node_of, rank_mesh,
                                       tp_crossings)
from assistant.validator.report import Derived
from ui.plots.fonts import label_lang
from ui.plots.scene import INK, Scene, to_png, to_svg

TEXTS_FILE = Path(__file__).with_name("mesh_texts.yaml")
VIEWS = ("mesh", "moe")
FORMATS = (".png", ".svg")
DETAIL_LIMIT = 256  # ranks drawn one labelled cell each; past this, one stripe per GPU and a summary per node
MAX_NODE_ROWS = 48  # node rows drawn in the large view: the first ones, a gap row, the last ones
TAIL_ROWS = 7
MAX_STAGES = 4  # pipeline stages drawn in the MoE view (the others have the same shape, shifted)
MAX_EP_ROWS = 16  # ep groups drawn per stage
MAX_EP_COLS = 64
MOE_CELLS = 1024  # about this many ranks drawn in the MoE view at most
LEGEND_ITEMS = 8
CROSS = "#d62728"
# tab20 with its strong colours first, so up to ten groups get ten clearly different colours; its red swapped
# for indigo, red being the mark of a group that crosses a node.
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#393b79", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
            "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7",
            "#dbdb8d", "#9edae5")


@cache
def _texts() -> dict:
    return read_yaml(TEXTS_FILE)


def _t(key: str, lang: str, **values) -> str:
    entry = _texts()[key]
    return entry.get(lang, entry["en"]).format(**values)


def colour_of(key: int) -> str:
    return _PALETTE[key % len(_PALETTE)]


def _ink_on(hex_colour: str) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return INK if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "white"


def ranks_text(ranks) -> str:
    """A group's ranks, short: 0–7, or 0, 8, …, 56 for a stride, or the first few."""
    ranks = list(ranks)
    if len(ranks) == 1:
        return str(ranks[0])
    step = ranks[1] - ranks[0]
    if all(b - a == step for a, b in zip(ranks, ranks[1:])):
        if step == 1:
            return f"{ranks[0]}–{ranks[-1]}"
        if len(ranks) > 4:
            return f"{ranks[0]}, {ranks[1]}, …, {ranks[-1]}"
    shown = ", ".join(str(r) for r in ranks[:4])
    return shown + (", …" if len(ranks) > 4 else "")


def axis_choices(d: Derived) -> tuple[str, ...]:
    return colour_axes(d)


def default_axis(d: Derived) -> str:
    return axis_choices(d)[0]


def _fit(s: str, cell: float, largest: float) -> float:
    """The font size that fits `s` in 80% of a cell `cell` inches wide, at most `largest` points."""
    return min(largest, 0.8 * cell * 72 / (max(2, len(s)) * 0.62))


def _nodes_text(world: int, gpn: int, lang: str) -> str:
    n = -(-world // gpn)
    return _t("nodes", lang, n=n, gpn=gpn) if n > 1 else _t("one_node", lang, gpn=gpn)


def _key(m: RankMesh, axis: str, rank: int) -> int:
    # pp colours by stage (the ranks holding the same layers); every other axis by the group a rank joins
    return m.coords(rank)[m.dims.index("pp")] if axis == "pp" else m.group_index(axis, rank)


def _legend(scene: Scene, m: RankMesh, axis: str, lang: str) -> None:
    count = m.group_count(axis) if axis != "pp" else m.extent("pp")
    shown = min(count, LEGEND_ITEMS)
    col_w = (scene.width - 0.5) / 2
    for i in range(shown):
        if axis == "pp":
            first = m.rank(tuple(i if d == "pp" else 0 for d in m.dims))
            block = m.size // m.extent("pp")
            label = _t("legend_stage", lang, i=i, ranks=f"{first}–{first + block - 1}")
        else:
            first = next(r for r in _first_ranks(m, axis, i))
            label = _t("legend_group", lang, axis=axis, i=i, ranks=ranks_text(m.group(axis, first)))
        x = 0.25 + (i % 2) * col_w
        y = scene.y + (i // 2) * 0.22
        scene.rect(x, y + 0.02, 0.16, 0.13, face=colour_of(i), edge=INK, lw=0.4)
        scene.text(x + 0.24, y, label, size=8)
    scene.y += -(-shown // 2) * 0.22
    if count > shown:
        scene.line(_t("legend_more", lang, n=count - shown), size=8)


def _first_ranks(m: RankMesh, axis: str, index: int):
    """The first rank of group `index` along `axis` (coordinates of the other dims, row-major)."""
    spans = set(m.axes(axis))
    others = [(i, n) for i, (d, n) in enumerate(zip(m.dims, m.shape)) if d not in spans]
    coords = [0] * len(m.dims)
    for i, n in reversed(others):
        index, coords[i] = divmod(index, n)
    yield m.rank(tuple(coords))


def _colour_line(m: RankMesh, axis: str, lang: str) -> str:
    if axis == "pp":
        return _t("colour_stage", lang, count=m.extent("pp"), size=m.size // m.extent("pp"))
    return _t("colour_group", lang, axis=axis, count=m.group_count(axis), size=m.extent(axis))


# ---------------------------------------------------------------------------------------------
# the device mesh


def _mesh_scene(d: Derived, gpn: int, axis: str, lang: str) -> Scene:
    m = rank_mesh(d)
    world = d.world_size
    rows = -(-world // gpn)
    detailed = world <= DETAIL_LIMIT
    cell = min(1.1, max(0.2, 12.0 / gpn)) if detailed else min(0.4, max(0.08, 6.0 / gpn))
    cell_h = cell * 0.72 if detailed else 0.2
    left = 1.0 if detailed else 2.0
    scene = Scene(width=max(7.5, left + gpn * cell + 0.6))
    names = ", ".join(m.dims)
    shape = ", ".join(str(n) for n in m.shape)
    scene.line(_t("title", lang, strategy=d.strategy, world=world, nodes=_nodes_text(world, gpn, lang)),
               size=12, weight="bold")
    if d.strategy == "ddp":
        scene.line(_t("ddp_line", lang, world=world), size=9)
    elif detailed and cell >= 0.55:
        scene.line(_t("mesh_line", lang, names=names, shape=shape), size=9)
    else:
        what = _t("what_stage" if axis == "pp" else "what_group", lang, axis=axis)
        scene.line(_t("mesh_line_bare", lang, names=names, shape=shape, what=what), size=9)
    scene.line(_colour_line(m, axis, lang), size=9)
    if not detailed:
        scene.line(_t("large", lang, world=world), size=9, colour="#555555")
    scene.y += 0.1
    tp = d.tp_size if "tp" in m.dims else 1
    drawn = list(range(rows)) if rows <= MAX_NODE_ROWS else [
        *range(MAX_NODE_ROWS - TAIL_ROWS - 1), None, *range(rows - TAIL_ROWS, rows)]
    row_y: dict[int, float] = {}
    for node in drawn:
        if node is None:
            a, b = MAX_NODE_ROWS - TAIL_ROWS - 1, rows - TAIL_ROWS - 1
            scene.text(left, scene.y + 0.02, _t("skipped_nodes", lang, a=a, b=b, n=b - a + 1), size=8,
                       colour="#555555")
            scene.y += 0.3
            continue
        row_y[node] = scene.y
        _node_row(scene, m, d, gpn, node, axis, lang, left=left, cell=cell, cell_h=cell_h, detailed=detailed)
    if tp > 1:
        _tp_brackets(scene, d.world_size, tp, gpn, row_y, x=left + gpn * cell, cell_h=cell_h)
    scene.y += 0.1
    _legend(scene, m, axis, lang)
    if tp > 1:
        cross = tp_crossings(d, gpn)
        if cross.crossing:
            scene.line(_t("tp_cross", lang, n=cross.crossing, total=cross.total, ranks=ranks_text(cross.first)),
                       size=8.5, colour=CROSS)
        else:
            scene.line(_t("tp_inside", lang), size=8.5, colour="#2b7a2b")
    return scene


def _tp_brackets(scene: Scene, world: int, tp: int, gpn: int, row_y: dict[int, float], *, x: float,
                 cell_h: float) -> None:
    """A red bar beside the rows a node-crossing tp group spans (tp groups are blocks of tp ranks)."""
    for k, start in enumerate(range(0, world, tp)):
        first, last = node_of(start, gpn), node_of(start + tp - 1, gpn)
        if first == last:
            continue
        ys = [row_y[n] for n in range(first, last + 1) if n in row_y]
        if not ys:
            continue
        bx = x + 0.08 + (k % 2) * 0.12
        scene.rect(bx, min(ys) + 0.03, 0.07, max(ys) - min(ys) + cell_h - 0.06, face=CROSS, edge=CROSS, lw=0.5)


def _node_row(scene: Scene, m: RankMesh, d: Derived, gpn: int, node: int, axis: str, lang: str, *,
              left: float, cell: float, cell_h: float, detailed: bool) -> None:
    first, last = node * gpn, min(d.world_size, (node + 1) * gpn) - 1
    tp = d.tp_size if "tp" in m.dims else 1
    y = scene.y
    keys = []
    crosses = False
    for col, rank in enumerate(range(first, last + 1)):
        key = _key(m, axis, rank)
        keys.append(key)
        face = colour_of(key)
        start = rank - rank % tp
        crossing = tp > 1 and node_of(start, gpn) != node_of(start + tp - 1, gpn)
        crosses = crosses or crossing
        x = left + col * cell
        # in the large view the node's frame carries the mark; stripes are too small for an outline each
        outline = crossing and detailed
        scene.rect(x + 0.02, y + 0.02, cell - 0.04, cell_h - 0.04, face=face,
                   edge=CROSS if outline else "white", lw=2.2 if outline else 0.5)
        if detailed and cell >= 0.3:
            ink = _ink_on(face)
            has_coords = cell >= 0.55
            scene.text(x + cell / 2, y + cell_h * (0.36 if has_coords else 0.5), str(rank), size=_fit(str(rank), cell, 10.0),
                       colour=ink, ha="center", va="center", weight="bold")
            if has_coords:
                coords = ",".join(str(c) for c in m.coords(rank))
                scene.text(x + cell / 2, y + cell_h * 0.72, coords, size=min(8.0, cell * 66 / max(9, len(coords))),
                           colour=ink, ha="center", va="center")
    # the node's frame: its boundary with the next node
    scene.rect(left, y, gpn * cell, cell_h, face="none", edge=CROSS if crosses and not detailed else INK, lw=1.4)
    if detailed:
        scene.text(left - 0.1, y + cell_h / 2, _t("node", lang, i=node), size=9, ha="right", va="center",
                   weight="bold")
    else:
        scene.text(left - 0.1, y + cell_h / 2, _t("node_ranks", lang, i=node, a=first, b=last), size=7.5,
                   ha="right", va="center")
        distinct = sorted(set(keys))
        groups = ranks_text(distinct)
        key = "summary_stage" if axis == "pp" else ("summary_group" if len(distinct) > 1 else "summary_group1")
        scene.text(left + gpn * cell + 0.4, y + cell_h / 2, _t(key, lang, axis=axis, groups=groups), size=7.5,
                   va="center")
    scene.y = y + cell_h + (0.06 if detailed else 0.04)


# ---------------------------------------------------------------------------------------------
# the MoE mesh


def _moe_scene(d: Derived, gpn: int, lang: str) -> Scene:
    moe = moe_mesh(d)
    world = d.world_size
    if moe is None:
        scene = Scene(width=7.5)
        scene.line(_t("no_moe", lang), size=11, weight="bold")
        return scene
    pp, ep_shard, ep = moe.shape
    cols = min(ep, MAX_EP_COLS)  # a wider ep group is drawn up to this many ranks, then "… n more"
    cell = min(0.9, max(0.3, 12.0 / cols))
    cell_h = cell * 0.6
    left = 1.3
    scene = Scene(width=max(7.5, left + cols * cell + 0.3))
    scene.line(_t("title_moe", lang, world=world, nodes=_nodes_text(world, gpn, lang)), size=12, weight="bold")
    scene.line(_t("moe_line", lang, ep=ep, ep_shard=ep_shard), size=9)
    if cols < ep:
        scene.line(_t("skipped_cols", lang, shown=cols, ep=ep), size=8.5, colour="#555555")
    scene.y += 0.1
    per_stage = ep_shard * ep
    stages = max(1, min(MAX_STAGES, MOE_CELLS // per_stage))  # big stages: fewer of them, the rest are shifts
    for stage in range(min(pp, stages)):
        base = stage * per_stage
        scene.line(_t("stage", lang, i=stage, a=base, b=base + per_stage - 1), size=9.5, weight="bold", x=0.25)
        # column heads: column j is ep_shard group j (the ranks holding the same experts)
        scene.text(left - 0.1, scene.y, _t("ep_shard_head", lang), size=7.5, ha="right", colour="#555555")
        for j in range(cols):
            scene.text(left + j * cell + cell / 2, scene.y, str(j), size=_fit(str(j), cell, 7.5), ha="center",
                       colour="#555555")
        scene.y += 0.18
        for row in range(min(ep_shard, MAX_EP_ROWS)):
            y = scene.y
            first, last = moe.rank((stage, row, 0)), moe.rank((stage, row, ep - 1))
            crossing = node_of(first, gpn) != node_of(last, gpn)
            for j in range(cols):
                rank = first + j
                face = colour_of(node_of(rank, gpn))
                x = left + j * cell
                scene.rect(x + 0.02, y + 0.02, cell - 0.04, cell_h - 0.04, face=face, edge="white", lw=0.5)
                scene.text(x + cell / 2, y + cell_h / 2, str(rank), size=_fit(str(rank), cell, 9.0),
                           colour=_ink_on(face), ha="center", va="center", weight="bold")
            scene.rect(left, y, cols * cell, cell_h, face="none", edge=CROSS if crossing else INK,
                       lw=2.0 if crossing else 1.0)
            scene.text(left - 0.1, y + cell_h / 2, _t("ep_row", lang, i=row), size=8.5, ha="right", va="center")
            scene.y = y + cell_h + 0.04
        if ep_shard > MAX_EP_ROWS:
            scene.line(_t("skipped_rows", lang, n=ep_shard - MAX_EP_ROWS), size=8, colour="#555555", x=left)
        scene.y += 0.12
    if pp > stages:
        scene.line(_t("skipped_stages", lang, a=stages, b=pp - 1, step=per_stage), size=8.5, colour="#555555")
    nodes = sorted({node_of(r, gpn) for r in range(min(world, stages * per_stage))})
    for i, node in enumerate(nodes[:LEGEND_ITEMS]):
        x = 0.25 + (i % 4) * 1.6
        y = scene.y + (i // 4) * 0.22
        scene.rect(x, y + 0.02, 0.16, 0.13, face=colour_of(node), edge=INK, lw=0.4)
        scene.text(x + 0.24, y, _t("node", lang, i=node), size=8)
    scene.y += -(-min(len(nodes), LEGEND_ITEMS) // 4) * 0.22
    if len(nodes) > LEGEND_ITEMS:
        scene.line(_t("legend_more", lang, n=len(nodes) - LEGEND_ITEMS), size=8)
    cross = block_crossings(ep, world, gpn)
    if cross.crossing:
        scene.line(_t("ep_cross", lang, n=cross.crossing, total=cross.total), size=8.5, colour=CROSS)
    else:
        scene.line(_t("ep_inside", lang), size=8.5, colour="#2b7a2b")
    return scene


# ---------------------------------------------------------------------------------------------
# entry points


def mesh_picture(d: Derived, gpus_per_node: int, *, axis: str | None = None, view: str = "mesh",
                 lang: str = "en") -> Scene:
    """The picture of a validated layout: `view` "mesh" (coloured by `axis`) or "moe"."""
    lang = label_lang(lang)
    gpn = max(1, int(gpus_per_node or DEFAULT_GPUS_PER_NODE))
    if view == "moe":
        return _moe_scene(d, gpn, lang)
    choices = axis_choices(d)
    chosen = axis if axis in choices else choices[0]
    return _mesh_scene(d, gpn, chosen, lang)


def picture_format(path: str | os.PathLike) -> str:
    """"png" or "svg" from the file name; ValueError for anything else (checked before any work)."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{Path(path).name}: the picture is written as .png or .svg, not {suffix or 'no extension'}")
    return suffix[1:]


def write_picture(scene: Scene, path: str | os.PathLike) -> None:
    """Write the picture by extension, atomically: a failed write leaves no partial file behind."""
    fmt = picture_format(path)
    data = to_svg(scene) if fmt == "svg" else to_png(scene)
    target = Path(path)
    # open(..., "xb"), not mkstemp: the file gets the user's usual permissions (umask), not 0600
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with open(tmp, "xb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
