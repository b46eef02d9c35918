"""A picture as plain data: rectangles and labels placed in inches, then rendered.

PNG through Pillow (what the CLI, the web page and Slack show: about 0.05 s to draw, where matplotlib's
import alone costs about 0.45 s of CPU and its text layout another 0.25 s for a 64-rank mesh); SVG
through matplotlib's vector backend, imported only when an SVG is asked for.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from functools import lru_cache

from ui.plots import fonts

INK = "#222222"
DPI = 100
_ANCHOR_H = {"left": "l", "center": "m", "right": "r"}
_ANCHOR_V = {"top": "a", "center": "m"}


def has_cjk(s: str) -> bool:
    return any(ord(c) > 0x2E80 for c in s)


def text_width(s: str, size: float) -> float:
    """Inches a label needs: about 0.58 em per Latin character, a full em per CJK one (DejaVu Sans, WenQuanYi)."""
    ems = sum(1.0 if ord(c) > 0x2E80 else 0.58 for c in s)
    return ems * size / 72


@dataclass
class Scene:
    width: float
    rects: list = field(default_factory=list)  # (x, y, w, h, face, edge, linewidth in points)
    texts: list = field(default_factory=list)  # (x, y, text, size in points, colour, ha, va, weight)
    y: float = 0.25  # the next free line, from the top
    reach: float = 0.0  # the right end of the widest left-aligned text, estimated

    def text(self, x, y, s, size=9.0, colour=INK, ha="left", va="top", weight="normal"):
        self.texts.append((x, y, s, size, colour, ha, va, weight))
        if ha == "left":
            self.reach = max(self.reach, x + text_width(s, size))

    def line(self, s, size=9.0, colour=INK, weight="normal", x=0.25):
        self.text(x, self.y, s, size, colour, weight=weight)
        self.y += size / 72 * 1.45

    def rect(self, x, y, w, h, face="none", edge=INK, lw=0.6):
        self.rects.append((x, y, w, h, face, edge, lw))

    def size(self) -> tuple[float, float]:
        # a long label widens the picture instead of being cut
        return max(self.width, self.reach + 0.25), self.y + 0.2

    def labels(self) -> list[str]:
        return [t[2] for t in self.texts]


@lru_cache(maxsize=64)
def _font(px: int, bold: bool, cjk: bool):
    from PIL import ImageFont

    path = fonts.cjk_font_file() if cjk else fonts.dejavu_file(bold)
    if path is None:
        return ImageFont.load_default(px)
    return ImageFont.truetype(path, px)


def to_image(scene: Scene, dpi: int = DPI):
    """The scene as a Pillow image (RGB, white background)."""
    from PIL import Image, ImageDraw

    width, height = scene.size()
    img = Image.new("RGB", (round(width * dpi), round(height * dpi)), "white")
    draw = ImageDraw.Draw(img)

    def px(v: float) -> int:
        return round(v * dpi)

    for x, y, w, h, face, edge, lw in scene.rects:
        draw.rectangle((px(x), px(y), px(x + w) - 1, px(y + h) - 1), fill=None if face == "none" else face,
                       outline=None if edge == "none" else edge, width=max(1, round(lw * dpi / 72)))
    for x, y, s, size, colour, ha, va, weight in scene.texts:
        font = _font(max(4, round(size * dpi / 72)), weight == "bold", has_cjk(s))
        draw.text((px(x), px(y)), s, fill=colour, font=font, anchor=_ANCHOR_H[ha] + _ANCHOR_V[va])
    return img


def to_png(scene: Scene, dpi: int = DPI) -> bytes:
    buf = io.BytesIO()
    to_image(scene, dpi).save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def to_svg(scene: Scene) -> bytes:
    """The same scene through matplotlib's SVG backend (text as paths: the file needs no fonts)."""
    from matplotlib.collections import PatchCollection
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    width, height = scene.size()
    fig = Figure(figsize=(width, height), dpi=DPI)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.set_axis_off()
    if scene.rects:
        ax.add_collection(PatchCollection(
            [Rectangle((x, y), w, h) for x, y, w, h, *_ in scene.rects], match_original=False,
            facecolors=[r[4] for r in scene.rects], edgecolors=[r[5] for r in scene.rects],
            linewidths=[r[6] for r in scene.rects]))
    family = fonts.families()
    for x, y, s, size, colour, ha, va, weight in scene.texts:
        ax.text(x, y, s, fontsize=size, color=colour, ha=ha, va=va, fontweight=weight, family=family)
    buf = io.BytesIO()
    fig.savefig(buf, format="svg")
    return buf.getvalue()
