"""The font for Chinese labels in charts: found once through matplotlib's font manager, or None."""
from __future__ import annotations

import importlib.util
import logging
import subprocess
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


@cache
def cjk_font_file() -> str | None:
    """The CJK font's file, for Pillow. fontconfig's list answers in milliseconds; matplotlib's font manager
    (a quarter second to import) only where fontconfig is missing."""
    try:
        listing = subprocess.run(["fc-list", ":lang=zh", "file", "family"], capture_output=True, text=True,
                                 timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        listing = None
    if listing is not None:
        entries = [line.partition(": ") for line in listing.splitlines() if ": " in line]
        for name in CJK_FONTS:
            for path, _, names in entries:
                if name in names.split(","):
                    return path
        return entries[0][0] if entries else None
    name = cjk_font()
    if name is None:
        return None
    from matplotlib import font_manager

    return font_manager.findfont(font_manager.FontProperties(family=name), fallback_to_default=False)


def dejavu_file(bold: bool = False) -> str | None:
    """DejaVu Sans as matplotlib ships it (found without importing matplotlib)."""
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "mpl-data" / "fonts" / "ttf" / (
        "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf")
    return str(path) if path.is_file() else None


def label_lang(lang: str) -> str:
    """The language a picture can label in: Chinese only when a CJK font is there, else English (never boxes)."""
    return "zh" if lang == "zh" and cjk_font_file() else "en"


def families() -> list[str]:
    cjk = cjk_font()
    return ["DejaVu Sans", cjk] if cjk else ["DejaVu Sans"]
