"""Answer and report -> the Markdown and chart the web page shows. Formatting only, no decisions."""
from __future__ import annotations

import html
from functools import cache
from pathlib import Path

import yaml

from assistant.retrieve.hit import Hit
from assistant.validator.report import MemoryEstimate, ValidationReport

EXCERPT_CHARS = 600


@cache
def texts() -> dict:
    return yaml.safe_load(Path(__file__).with_name("texts.yaml").read_text(encoding="utf-8"))


def t(key: str, lang: str, **values) -> str:
    entry = texts()[key]
    return entry.get(lang, entry["en"]).format(**values)


def _shape(shape) -> str:
    return "(" + ", ".join(str(n) for n in shape) + ")"


def verdict_md(report: ValidationReport | None, lang: str) -> str:
    head = f"### {t('verdict', lang)}\n"
    if report is None:
        return head + t("verdict_none", lang)
    n = report.world_size if report.world_size is not None else "?"
    lines = [head + ("✅ " + t("verdict_ok", lang, n=n) if report.ok else "❌ " + t("verdict_bad", lang, n=n))]
    d = report.derived
    if d is not None:
        lines.append(t("derived", lang, dp=d.dp_size, mesh=_shape(d.mesh_shape)))
        if d.moe_mesh_shape:
            lines.append(t("moe_mesh", lang, mesh=_shape(d.moe_mesh_shape)))
    lines += findings_md(report, lang)
    return "\n\n".join(lines)


def findings_md(report: ValidationReport, lang: str) -> list[str]:
    out = []
    for title_key, items, mark in (("errors", report.errors, "❌"), ("warnings", report.warnings, "⚠️")):
        if items:
            out.append(f"**{t(title_key, lang)}**")
            for f in items:
                msg = f.message_zh if lang == "zh" else f.message
                other = f.message if lang == "zh" else f.message_zh
                out.append(f"- {mark} `{f.code}` {msg}  \n  <small>{html.escape(other)} · `{f.path}` · {html.escape(f.upstream)}</small>")
    return out


def report_md(report: ValidationReport, lang: str) -> str:
    """The Validate tab: verdict, derived sizes, both-language findings, memory numbers."""
    parts = [verdict_md(report, lang)]
    d = report.derived
    if d is not None:
        parts.append(f"`strategy={d.strategy}` `tp={d.tp_size}` `pp={d.pp_size}` `cp={d.cp_size}` `ep={d.ep_size}` "
                     f"`dp_replicate={d.dp_replicate_size}` `dp_shard={d.dp_shard_size}`"
                     + (f" `grad_acc_steps={d.grad_acc_steps}`" if d.grad_acc_steps else ""))
    m = report.memory
    if m is not None:
        parts.append(memory_md(m, lang))
    return "\n\n".join(parts)


def memory_md(m: MemoryEstimate, lang: str) -> str:
    cap = f" / {m.capacity_gib:.0f} GiB" if m.capacity_gib else ""
    rows = [f"**{t('memory_chart', lang)}: {m.total_gib:.1f} GiB{cap}**"]
    rows += [f"- {a}" for a in m.assumptions]
    return "\n".join(rows)


def sources_md(hits: list[Hit], lang: str) -> str:
    if not hits:
        return f"### {t('sources', lang)}\n{t('sources_none', lang)}"
    out = [f"### {t('sources', lang)}"]
    for i, h in enumerate(hits, 1):
        excerpt = h.text if len(h.text) <= EXCERPT_CHARS else h.text[:EXCERPT_CHARS].rstrip() + " …"
        heading = f" › {html.escape(h.heading)}" if h.heading and h.heading != h.title else ""
        out.append(f"<details><summary>[{i}] <b>{html.escape(h.title)}</b>{heading} · <code>{html.escape(h.path)}</code></summary>\n\n"
                   f"{html.escape(excerpt)}\n\n</details>")
    return "\n".join(out)


def memory_figure(m: MemoryEstimate | None, lang: str):
    """A horizontal stacked bar of the per-GPU estimate against the GPU's capacity."""
    if m is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # English labels in both languages: matplotlib's bundled font has no CJK glyphs.
    labels = ("parameters", "gradients", "optimizer states", "activations")
    values = (m.params_gib, m.grads_gib, m.optimizer_gib, m.activations_gib)
    fig, ax = plt.subplots(figsize=(7, 1.9), dpi=100)
    left = 0.0
    for label, value, color in zip(labels, values, ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2")):
        ax.barh([0], [value], left=left, color=color, label=f"{label} {value:.1f} GiB")
        left += value
    if m.capacity_gib:
        ax.axvline(m.capacity_gib, color="black", linestyle="--", linewidth=1.5, label=f"{m.gpu or 'GPU'} {m.capacity_gib:.0f} GiB")
    ax.set_yticks([])
    ax.set_xlabel("GiB")
    ax.set_xlim(0, max(left, m.capacity_gib or 0) * 1.1 or 1)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=3, fontsize=7, frameon=False)
    fig.tight_layout()
    return fig
