"""How `meshwise validate` prints its checked targets: text, JSON, GitHub workflow annotations,
SARIF 2.1.0 (code scanning) and JUnit XML. Pure: each function returns the text; the command prints.

Every finding line is `file:line:col: [CODE] path: message`, the form editors and CI problem
matchers read; a finding an override set or caused also names the argument.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import PurePath
from typing import Sequence
from urllib.parse import quote

from assistant.cli.validate_files import Checked
from assistant.launch.codes import CODES as LAUNCH_CODES
from assistant.validator.findings import RULES
from assistant.validator.locate import Location
from assistant.validator.report import Finding, ValidationReport

FORMATS = ("text", "json", "github", "sarif", "junit")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("meshwise")
    except PackageNotFoundError:
        return "0.1.0"


# ---------------------------------------------------------------------------------------------
# text

_L = {
    "en": {"valid": "VALID", "invalid": "INVALID", "at": "at world_size", "nodes": "nodes x", "node": "node x", "gpus": "GPUs",
           "strategy": "strategy", "mesh": "device mesh", "moe": "MoE mesh (ep_shard, ep), per pipeline stage",
           "ddp": "no device mesh (DDP replicates the model on every rank)", "gacc": "gradient accumulation steps",
           "errors": "Errors", "warnings": "Warnings", "mirrors": "mirrors", "memory": "Memory per GPU (estimate)",
           "fix": "Suggested fix (re-validated)", "nofix": "No automatic fix found.", "params": "params",
           "grads": "grads", "optim": "optimizer", "acts": "activations", "total": "total", "of": "of",
           "assume": "assumptions", "argument": "set by", "world_from": "world size from", "ranks": "ranks",
           "shared": "on this same mesh (separate_meshes is false: recipes/llm/kd.py builds the teacher on the student's setup)"},
    "zh": {"valid": "通过", "invalid": "不通过", "at": "world_size 为", "nodes": "节点 x", "node": "节点 x", "gpus": "GPU",
           "strategy": "strategy", "mesh": "device mesh", "moe": "MoE mesh (ep_shard, ep)，每个流水线阶段",
           "ddp": "无 device mesh（DDP 在每个 rank 上复制整个模型）", "gacc": "梯度累积步数",
           "errors": "错误", "warnings": "警告", "mirrors": "对应上游", "memory": "每 GPU 显存（估算）",
           "fix": "建议的修改（已重新校验）", "nofix": "没有找到自动修复方案。", "params": "参数",
           "grads": "梯度", "optim": "优化器状态", "acts": "激活", "total": "合计", "of": "/",
           "assume": "假设", "argument": "来自参数", "world_from": "world size 来自", "ranks": "rank",
           "shared": "与上面同一个 mesh（separate_meshes 为 false：recipes/llm/kd.py 在 student 的 setup 上构建 teacher）"},
}


def _t(lang: str) -> dict[str, str]:
    return _L["zh" if lang == "zh" else "en"]


def finding_line(f: Finding, loc: Location | None, lang: str = "en") -> str:
    """`file:line:col: [CODE] path: message` (the place omitted when the input has no file)."""
    msg = f.message_zh if lang == "zh" else f.message
    place = f"{loc.file}:{loc.line}:{loc.col}: " if loc is not None and loc.file is not None else ""
    arg = f" [{_t(lang)['argument']} {loc.argument}]" if loc is not None and loc.argument else ""
    return f"{place}[{f.code}] {f.path + ': ' if f.path else ''}{msg}{arg}"


def render(report: ValidationReport, lang: str = "en", located: Sequence[tuple[Finding, Location]] = ()) -> str:
    """The human-readable report of one validation; findings with their place when `located` has it."""
    t = _t(lang)
    where_of = {id(f): loc for f, loc in located}
    lines: list[str] = []
    world, gpn = report.world_size, report.gpus_per_node
    where = f"{t['at']} {world}"
    if world and gpn and world % gpn == 0:
        nodes = world // gpn
        label = t["nodes"] if nodes > 1 else t["node"]
        where += f" ({nodes} {label} {gpn} {t['gpus']})"
    lines.append(f"{t['valid'] if report.ok else t['invalid']} {where}")
    d = report.derived
    if d is not None:
        lines.append(f"  {t['strategy']} {d.strategy}: dp {d.dp_size} (dp_replicate {d.dp_replicate_size} x dp_shard "
                     f"{d.dp_shard_size}), tp {d.tp_size}, pp {d.pp_size}, cp {d.cp_size}, ep {d.ep_size}")
        if d.mesh_shape:
            lines.append(f"  {t['mesh']} ({', '.join(d.mesh_dim_names)}) = ({', '.join(map(str, d.mesh_shape))})")
        else:
            lines.append(f"  {t['ddp']}")
        if d.moe_mesh_shape:
            lines.append(f"  {t['moe']} = ({d.moe_mesh_shape[0]}, {d.moe_mesh_shape[1]})")
        if d.grad_acc_steps is not None:
            lines.append(f"  {t['gacc']}: {d.grad_acc_steps}")
    for m in report.meshes:
        head = f"  {m.label} ({t['ranks']} {m.ranks[0]}-{m.ranks[1]}): "
        o = m.derived
        if m.shared or o is None:
            lines.append(head + (t["shared"] if m.shared else "-"))
            continue
        shape = f", {t['mesh']} ({', '.join(o.mesh_dim_names)}) = ({', '.join(map(str, o.mesh_shape))})" if o.mesh_shape else ""
        lines.append(f"{head}{o.strategy}: dp {o.dp_size}, tp {o.tp_size}, pp {o.pp_size}, cp {o.cp_size}, ep {o.ep_size}{shape}")
    for title, findings in ((t["errors"], report.errors), (t["warnings"], report.warnings)):
        if not findings:
            continue
        lines.append(f"{title}:")
        for f in findings:
            loc = where_of.get(id(f))
            line = finding_line(f, loc, lang)
            lines.append(line if loc is not None and loc.file is not None else f"  {line}")
            lines.append(f"      ({t['mirrors']}: {f.upstream})")
    m = report.memory
    if m is not None:
        cap = f" {t['of']} {m.capacity_gib:.1f} GiB ({m.gpu})" if m.capacity_gib else ""
        lines.append(f"{t['memory']}: {t['total']} {m.total_gib:.1f} GiB{cap}")
        lines.append(f"  {t['params']} {m.params_gib:.1f}, {t['grads']} {m.grads_gib:.1f}, {t['optim']} "
                     f"{m.optimizer_gib:.1f}, {t['acts']} {m.activations_gib:.1f} GiB")
        for a in m.assumptions_in(lang):
            lines.append(f"  - {a}")
    if not report.ok:
        if report.suggested_fix:
            lines.append(f"{t['fix']}:")
            lines.extend("  " + ln for ln in report.suggested_fix.rstrip().splitlines())
        else:
            lines.append(t["nofix"])
    return "\n".join(lines)


def _error_text(c: Checked, lang: str) -> str:
    e = c.error
    return (e.message_zh if lang == "zh" else e.message) if e is not None else ""


def text(results: Sequence[Checked], lang: str = "en") -> str:
    """One block per target; a heading names the file and world size when there is more than one."""
    t = _t(lang)
    blocks: list[str] = []
    said: set[str | None] = set()
    for c in results:
        head = f"== {c.target.file} @ world_size {c.target.world_size} ==" if len(results) > 1 else ""
        if c.target.world_source:
            head = "\n".join(x for x in (head, f"({t['world_from']} {c.target.world_source})") if x)
        if c.skipped is not None:
            if c.target.file not in said:  # once per file, not once per world size
                said.add(c.target.file)
                name = f"{c.target.file}: " if c.target.file not in (None, "-") else ""
                blocks.append(name + (c.skipped.zh if lang == "zh" else c.skipped.en))
            continue
        if c.report is None:
            continue  # said on standard error by the command (unusable_lines)
        body = render(c.report, lang, c.located)
        blocks.append("\n".join(x for x in (head, body) if x))
    return "\n\n".join(blocks)


def unusable_lines(results: Sequence[Checked], lang: str = "en") -> list[str]:
    """`file: why` for each unusable target (the bare reason when the call had one target)."""
    bad = [c for c in results if c.report is None and c.skipped is None]
    lines = [_error_text(c, lang) if len(results) == 1 else f"{c.target.file}: {_error_text(c, lang)}" for c in bad]
    return list(dict.fromkeys(lines))  # an unreadable file is said once, not once per world size


# ---------------------------------------------------------------------------------------------
# JSON


def report_json(report: ValidationReport, located: Sequence[tuple[Finding, Location]] = ()) -> dict:
    """The report as `validate --json` prints it: the report's fields, its codes, and each finding's
    `location` ({file, line, column, argument}; null when the input had no text to place it in)."""
    d = report.to_dict()
    d["codes"] = report.codes
    where_of = {id(f): loc for f, loc in located}
    for key, findings in (("errors", report.errors), ("warnings", report.warnings)):
        for fd, f in zip(d[key], findings):
            loc = where_of.get(id(f))
            fd["location"] = loc.to_dict() if loc is not None else None
    return d


def error_json(en: str, zh: str) -> dict:
    return {"ok": None, "error": {"message": en, "message_zh": zh}}


def checked_json(c: Checked) -> dict:
    t = c.target
    head = {"file": t.file, "world_source": t.world_source}
    if c.skipped is not None:
        return {**head, "ok": None, "skipped": {"message": c.skipped.en, "message_zh": c.skipped.zh, "reason": c.skipped.reason},
                "world_size": t.world_size, "gpus_per_node": t.gpus_per_node}
    if c.report is None:
        e = c.error
        return {**head, **error_json(e.message if e else "", e.message_zh if e else ""),
                "world_size": t.world_size, "gpus_per_node": t.gpus_per_node}
    return {**head, **report_json(c.report, c.located)}


def json_text(results: Sequence[Checked], exit_code: int) -> str:
    """One target: its report object (the shape one file always had). More: {ok, exit_code, reports}."""
    if len(results) == 1:
        return json.dumps(checked_json(results[0]), ensure_ascii=False, default=str, allow_nan=False)
    oks = [c.report.ok if c.report is not None else None for c in results if c.skipped is None]
    ok = None if None in oks else all(oks)
    return json.dumps({"ok": ok, "exit_code": exit_code, "reports": [checked_json(c) for c in results]},
                      ensure_ascii=False, default=str, allow_nan=False)


# ---------------------------------------------------------------------------------------------
# GitHub workflow commands


def _gh_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(s: str) -> str:
    return _gh_data(s).replace(":", "%3A").replace(",", "%2C")


def _annotation(kind: str, message: str, *, file: str | None, line: int | None = None, col: int | None = None,
                title: str | None = None) -> str:
    props = []
    if file is not None and file != "-":
        props.append(f"file={_gh_prop(file)}")
        if line is not None:
            props.append(f"line={line}")
        if col is not None:
            props.append(f"col={col}")
    if title:
        props.append(f"title={_gh_prop(title)}")
    return f"::{kind} {','.join(props)}::{_gh_data(message)}" if props else f"::{kind}::{_gh_data(message)}"


def github(results: Sequence[Checked], lang: str = "en", fail_on_warnings: bool = False) -> str:
    """One workflow annotation per finding (warnings as errors with fail_on_warnings), then the full report."""
    lines = []
    for c in results:
        world = c.target.world_size
        if c.skipped is not None:
            continue  # the text report below says it; an annotation would mark a file nobody has to fix
        if c.report is None:
            lines.append(_annotation("error", _error_text(c, lang), file=c.target.file, line=1, col=1,
                                     title="meshwise validate: unusable input"))
            continue
        for f, loc in c.located:
            kind = "error" if f.severity == "error" or fail_on_warnings else "warning"
            msg = finding_line(f, None, lang) + f" (world_size {world})"
            if loc.argument:
                msg += f" [{_t(lang)['argument']} {loc.argument}]"
            lines.append(_annotation(kind, msg, file=loc.file, line=loc.line, col=loc.col, title=f.code))
    return "\n".join([*lines, text(results, lang)])


# ---------------------------------------------------------------------------------------------
# SARIF 2.1.0


def _uri(file: str | None) -> str:
    return quote(PurePath(file).as_posix() if file not in (None, "-") else "stdin", safe="/:")


def sarif_rules() -> list[dict]:
    """One reportingDescriptor per code of the rule tables (the validator's, then the launch reader's), in table order."""
    out = []
    for code, rule in (*RULES.items(), *LAUNCH_CODES.items()):
        out.append({
            "id": code,
            "name": "".join(w.capitalize() for w in code.split("-")[2:]) or code,
            "shortDescription": {"text": f"{code} ({rule.severity})"},
            "fullDescription": {"text": rule.en},
            "help": {"text": f"Mirrors {rule.upstream}. {rule.en}"},
            "defaultConfiguration": {"level": "error" if rule.severity == "error" else "warning"},
            "properties": {"upstream": rule.upstream, "message_zh": rule.zh},
        })
    return out


def sarif(results: Sequence[Checked], lang: str = "en", fail_on_warnings: bool = False) -> dict:
    """A SARIF 2.1.0 log with one run: every code of the tables as a rule, one result per finding, and
    an unusable file as a tool execution notification (it has no rule)."""
    rules = sarif_rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    out, notes = [], []
    for c in results:
        t = c.target
        if c.skipped is not None:
            continue
        if c.report is None:
            notes.append({"level": "error", "message": {"text": f"{t.file}: {_error_text(c, lang)}"},
                          "locations": [{"physicalLocation": {"artifactLocation": {"uri": _uri(t.file)}}}]})
            continue
        for f, loc in c.located:
            msg = f.message_zh if lang == "zh" else f.message
            text_ = f"{f.path}: {msg} (world_size {t.world_size})" if f.path else f"{msg} (world_size {t.world_size})"
            if loc.argument:
                text_ += f" [{_t(lang)['argument']} {loc.argument}]"
            result = {
                "ruleId": f.code,
                "level": "error" if f.severity == "error" or fail_on_warnings else "warning",
                "message": {"text": text_},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": _uri(loc.file or t.file)},
                    "region": {"startLine": loc.line, "startColumn": loc.col},
                }}],
                "properties": {"path": f.path, "world_size": t.world_size, "gpus_per_node": t.gpus_per_node,
                               "argument": loc.argument, "upstream": f.upstream},
            }
            if f.code in index:
                result["ruleIndex"] = index[f.code]
            out.append(result)
    invocation = {"executionSuccessful": not notes}
    if notes:
        invocation["toolExecutionNotifications"] = notes
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "meshwise", "version": _version(), "rules": rules}},
            "invocations": [invocation],
            "results": out,
        }],
    }


def sarif_text(results: Sequence[Checked], lang: str = "en", fail_on_warnings: bool = False) -> str:
    return json.dumps(sarif(results, lang, fail_on_warnings), ensure_ascii=False, indent=1, allow_nan=False)


# ---------------------------------------------------------------------------------------------
# JUnit XML


def junit(results: Sequence[Checked], lang: str = "en", fail_on_warnings: bool = False) -> str:
    """One <testcase> per file and world size: <failure> when invalid (or warned, with
    fail_on_warnings), <error> when unusable, <skipped> when no recipe; the full report in <system-out>."""
    suite = ET.Element("testsuite", name="meshwise validate", tests=str(len(results)))
    failures = errors = skipped = 0
    for c in results:
        t = c.target
        case = ET.SubElement(suite, "testcase", classname="meshwise.validate",
                             name=f"{t.file} @ world_size {t.world_size}" if t.world_size else str(t.file), file=t.file)
        code = c.exit_code(fail_on_warnings)
        if c.skipped is not None:
            skipped += 1
            ET.SubElement(case, "skipped", message=(c.skipped.zh if lang == "zh" else c.skipped.en))
        elif c.report is None:
            errors += 1
            ET.SubElement(case, "error", message=_error_text(c, lang), type="unusable-input")
        elif code:
            failures += 1
            bad = [(f, loc) for f, loc in c.located if f.severity == "error" or fail_on_warnings]
            first = bad[0][0] if bad else None
            node = ET.SubElement(case, "failure", message=finding_line(first, None, lang) if first else "",
                                 type=first.code if first else "invalid")
            node.text = "\n".join(finding_line(f, loc, lang) for f, loc in bad)
        out = ET.SubElement(case, "system-out")
        out.text = text([c], lang)
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    root = ET.Element("testsuites", name="meshwise", tests=str(len(results)), failures=str(failures), errors=str(errors))
    root.append(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def formatted(fmt: str, results: Sequence[Checked], exit_code: int, lang: str = "en",
              fail_on_warnings: bool = False) -> str:
    if fmt == "json":
        return json_text(results, exit_code)
    if fmt == "github":
        return github(results, lang, fail_on_warnings)
    if fmt == "sarif":
        return sarif_text(results, lang, fail_on_warnings)
    if fmt == "junit":
        return junit(results, lang, fail_on_warnings)
    return text(results, lang)
