"""Answer and report -> the Markdown and chart the web page shows. Formatting only, no decisions."""
from __future__ import annotations

import html
import re
from functools import cache
from pathlib import Path

import yaml

from assistant.compose.gate.check import unchecked_config_or_claim
from assistant.retrieve.hit import Hit
from assistant.validator.report import MemoryEstimate, ValidationReport
from ui.markdown_literal import protect_literals

EXCERPT_CHARS = 600
# Plain symbols that common text fonts carry (an emoji like ✅ shows as a box where no emoji font is
# installed), coloured by style.css.
OK_MARK = '<span class="mw-ok">✔</span>'
BAD_MARK = '<span class="mw-bad">✘</span>'
WARN_MARK = '<span class="mw-warn">⚠</span>'
INFO_MARK = '<span class="mw-info">ℹ</span>'
TEXTS_FILE = Path(__file__).with_name("texts.yaml")


@cache
def texts() -> dict:
    return yaml.safe_load(TEXTS_FILE.read_text(encoding="utf-8"))


def t(key: str, lang: str, **values) -> str:
    entry = texts()[key]
    return entry.get(lang, entry["en"]).format(**values)


def _shape(shape) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]~|])")


def md_text(text: str) -> str:
    """Validator text shown inside Markdown: `tp*cp*pp` must stay literal, not turn into emphasis."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


# The citation list an answer ends with ("**Sources**" then "[n] title — `path`" lines): the side panel
# shows it with excerpts, so in the chat it folds away instead of burying the answer.
_CITATION_LIST = re.compile(r"\n\*\*(?P<head>[^*\n]{1,60})\*\*\n\n(?P<items>(?:\[\d+\] [^\n]*(?:\n|$))+)\s*$")


def chat_markdown(text: str) -> str:
    """An answer as the chat shows it: its arithmetic and identifiers literal, its trailing citation list collapsed."""
    text = protect_literals(text)
    m = _CITATION_LIST.search(text)
    if not m:
        return text
    items = m.group("items").rstrip("\n")
    n = items.count("\n") + 1
    return (text[:m.start()].rstrip("\n") + f"\n\n<details class=\"mw-cites\"><summary><b>{html.escape(m.group('head'))}</b>"
            f" ({n})</summary>\n\n{items}\n\n</details>\n")


def verdict_md(report: ValidationReport | None, lang: str) -> str:
    head = f"### {t('verdict', lang)}\n"
    if report is None:
        return head + t("verdict_none", lang)
    n = report.world_size if report.world_size is not None else "?"
    lines = [head + (f"{OK_MARK} " + t("verdict_ok", lang, n=n) if report.ok else f"{BAD_MARK} " + t("verdict_bad", lang, n=n))]
    d = report.derived
    if d is not None:
        names = ", ".join(d.mesh_dim_names)
        lines.append(t("derived", lang, strategy=d.strategy, dp=d.dp_size, names=names, mesh=_shape(d.mesh_shape)))
        if d.moe_mesh_shape:
            lines.append(t("moe_mesh", lang, mesh=_shape(d.moe_mesh_shape)))
    if report.memory is not None:
        m = report.memory
        cap = f" / {m.capacity_gib:.0f} GiB ({m.gpu})" if m.capacity_gib else ""
        lines.append(t("memory_line", lang, total=f"{m.total_gib:.1f}", cap=cap))
    lines += findings_md(report, lang)
    return "\n\n".join(lines)


def findings_md(report: ValidationReport, lang: str) -> list[str]:
    """Errors then warnings; each in the chosen language with the other language below it."""
    out = []
    for title_key, items, mark in (("errors", report.errors, BAD_MARK), ("warnings", report.warnings, WARN_MARK)):
        if items:
            out.append(f"**{t(title_key, lang)}**")
            for f in items:
                msg = f.message_zh if lang == "zh" else f.message
                other = f.message if lang == "zh" else f.message_zh
                out.append(f"- {mark} `{f.code}` {md_text(msg)}  \n"
                           f"  <small>{md_text(other)} · `{f.path}` · {md_text(f.upstream)}</small>")
    return out


def report_md(report: ValidationReport, lang: str) -> str:
    """The Validate tab: verdict, derived sizes, both-language findings, memory assumptions."""
    parts = [verdict_md(report, lang)]
    d = report.derived
    if d is not None:
        parts.append(f"`strategy={d.strategy}` `tp={d.tp_size}` `pp={d.pp_size}` `cp={d.cp_size}` `ep={d.ep_size}` "
                     f"`dp_replicate={d.dp_replicate_size}` `dp_shard={d.dp_shard_size}`"
                     + (f" `grad_acc_steps={d.grad_acc_steps}`" if d.grad_acc_steps else ""))
    if report.suggested_fix:
        parts.append(f"**{t('suggested_fix', lang)}**: {t('fix_below', lang)}")
    return "\n\n".join(parts)


def memory_details_md(m: MemoryEstimate | None, lang: str) -> str:
    """The estimate's assumptions, folded: the chart says how much, this says why."""
    if m is None:
        return ""
    items = "\n".join(f"- {md_text(a)}" for a in m.assumptions_in(lang))
    return f"<details><summary>{t('memory_details', lang)}</summary>\n\n{items}\n\n</details>"


def sources_md(hits: list[Hit], lang: str) -> str:
    if not hits:
        return f"### {t('sources', lang)}\n{t('sources_none', lang)}"
    out = [f"### {t('sources', lang)}"]
    for i, h in enumerate(hits, 1):
        excerpt = h.text if len(h.text) <= EXCERPT_CHARS else h.text[:EXCERPT_CHARS].rstrip() + " …"
        heading = f" › {html.escape(h.heading)}" if h.heading and h.heading != h.title else ""
        # One line of raw HTML per source: a blank line or a ``` fence inside the excerpt would otherwise end the
        # HTML block and let the chunk's Markdown swallow the rest of the panel. <pre> keeps its line breaks.
        body = html.escape(excerpt).replace("\r", "").replace("\n", "&#10;")
        # Retrieved text is untrusted: a config or a verdict inside it is flagged, never shown as Meshwise's.
        unchecked = (f" · {WARN_MARK} <i class=\"mw-unchecked\">{html.escape(t('source_unchecked', lang))}</i>"
                     if unchecked_config_or_claim(h.text) else "")
        out.append(f"<details><summary>[{i}] <b>{html.escape(h.title)}</b>{heading} · <code>{html.escape(h.path)}</code>"
                   f"{unchecked}</summary><pre class=\"mw-excerpt\">{body}</pre></details>")
    return "\n\n".join(out)


def _cjk_font() -> str | None:
    # The one lookup, shared with the mesh picture; imported here, where matplotlib is about to be.
    from ui.plots.fonts import cjk_font

    return cjk_font()


def memory_figure(m: MemoryEstimate | None, lang: str):
    """A horizontal stacked bar of the per-GPU estimate against the GPU's capacity, or None."""
    if m is None:
        return None
    # A bare Figure, not pyplot: no global figure registry to leak or race on in a threaded server.
    from matplotlib.figure import Figure

    cjk = _cjk_font()
    label_lang = lang if (lang == "en" or cjk) else "en"
    keys = ("mem_params", "mem_grads", "mem_optimizer", "mem_activations")
    values = (m.params_gib, m.grads_gib, m.optimizer_gib, m.activations_gib)
    fig = Figure(figsize=(7, 2.4), dpi=100)
    ax = fig.add_subplot()
    family = ["DejaVu Sans", cjk] if cjk else ["DejaVu Sans"]
    left = 0.0
    for key, value, color in zip(keys, values, ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2")):
        ax.barh([0], [value], left=left, color=color, label=f"{t(key, label_lang)} {value:.1f} GiB")
        left += value
    if m.capacity_gib:
        ax.axvline(m.capacity_gib, color="black", linestyle="--", linewidth=1.5,
                   label=f"{m.gpu or 'GPU'} {m.capacity_gib:.0f} GiB")
    ax.set_yticks([])
    ax.set_xlim(0, max(left, m.capacity_gib or 0) * 1.1 or 1)
    ax.xaxis.set_major_formatter("{x:g} GiB")
    ax.tick_params(axis="x", labelsize=8)
    cap = f" / {m.capacity_gib:.0f} GiB" if m.capacity_gib else ""
    ax.set_title(f"{t('memory_chart', label_lang)}: {m.total_gib:.1f} GiB{cap}", fontsize=10, family=family)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3, frameon=False,
              prop={"family": family, "size": 8})
    fig.set_layout_engine("tight")
    return fig
