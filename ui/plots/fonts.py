"""The font for Chinese labels in charts: found once through matplotlib's font manager, or None."""
from __future__ import annotations

import logging
from functools import cache
from pathlib import Path

# Tried in order; `make install-browser` installs WenQuanYi Micro Hei (fonts-wqy-microhei).
CJK_FONTS = ("Noto Sans CJK SC", "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "Source Han Sans SC", "SimHei")
CJK_FONT_FILES = ("wqy-", "notosanscjk", "sourcehansans", "simhei")


@cache
def cjk_font() -> str | None:
    from matplotlib import font_manager
    from matplotlib.font_manager import FontProperties

    def known() -> str | None:
        for name in CJK_FONTS:
            try:
                font_manager.findfont(FontProperties(family=name), fallback_to_default=False)
                return name
            except ValueError:
                continue
        return None

    found = known()
    if found is None:
        # matplotlib's font cache predates fonts installed later (make install-browser): register them.
        for path in font_manager.findSystemFonts():
            if any(k in Path(path).name.lower() for k in CJK_FONT_FILES):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue
        found = known()
    if found:
        # CJK fonts ship one weight; matplotlib would warn on every bold title that it used the regular one.
        logging.getLogger("matplotlib.font_manager").setLevel(logging.ERROR)
    return found


def label_lang(lang: str) -> str:
    """The language a chart can label in: Chinese only when a CJK font is there, else English (never boxes)."""
    return "zh" if lang == "zh" and cjk_font() else "en"


def families() -> list[str]:
    cjk = cjk_font()
    return ["DejaVu Sans", cjk] if cjk else ["DejaVu Sans"]
