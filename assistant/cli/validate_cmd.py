"""`meshwise validate`: check a NeMo AutoModel recipe (or bare distributed: mapping) at a world size.

Exit codes: 0 valid, 1 invalid, 2 unusable input. `--json --stdin` is a JSON-lines batch mode:
one request per line in, one report per line out, in order.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from assistant.cli.jsonlines import json_line, parse_line, read_lines
from assistant.defaults import DEFAULT_GPUS_PER_NODE, MAX_GPUS_PER_NODE
from assistant.validator import UnusableInput, ValidationReport, validate
from assistant.validator.coerce import MAX_BYTES
from assistant.validator.rules import describe

EXIT_VALID, EXIT_INVALID, EXIT_UNUSABLE = 0, 1, 2
PLOT_AXES = ("tp", "pp", "dp_shard", "dp_replicate", "cp", "dp")  # those a layout lacks are refused after validation
_LINE_LIMIT = 4 * MAX_BYTES  # a JSON line carries the YAML escaped


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "validate",
        help="check a recipe's distributed sizing against NeMo AutoModel's start-up rules",
        description="Validate a NeMo AutoModel recipe (or a bare distributed: mapping) at a world size. "
        "Exit 0 valid, 1 invalid, 2 unusable input.",
    )
    p.add_argument("file", nargs="?", help="recipe YAML file, or - for standard input")
    p.add_argument("--world-size", type=int, help="total number of GPUs (ranks)")
    p.add_argument("--nodes", type=int, help="number of nodes (world size = nodes * gpus-per-node)")
    p.add_argument("--gpus-per-node", type=int, default=None, help="GPUs per node (default 8)")
    m = p.add_mutually_exclusive_group()
    m.add_argument("--model", help="a bundled model name for model-aware checks and the memory estimate")
    m.add_argument("--model-config", help="path to a Hugging Face config.json")
    p.add_argument("--gpu", help="GPU name for the memory estimate, e.g. h100-80gb")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the human-readable report")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--stdin", action="store_true",
                   help='batch mode (with --json): JSON lines {"id", "yaml" or "config", "world_size", "gpus_per_node"} in, one report per line out')
    p.add_argument("--distributed-only", action="store_true",
                   help="only the distributed section's verdict (skip pipeline schedule, microbatch and batch-size checks)")
    p.add_argument("--plot", metavar="FILE",
                   help="draw the device mesh of a valid layout to FILE (.png or .svg): every rank in its node's row")
    p.add_argument("--plot-axis", choices=PLOT_AXES, default=None,
                   help="colour the picture by this axis's groups (default: the first axis larger than 1, tp first)")
    p.add_argument("--plot-view", choices=("mesh", "moe"), default="mesh",
                   help="mesh: the device mesh by node; moe: the expert mesh (ep_shard, ep) per pipeline stage")
    return p


def run(args: argparse.Namespace) -> int:
    if args.stdin:
        if not args.json:
            return _usage("--stdin batch mode needs --json", "--stdin 批处理模式需要同时使用 --json", args.lang)
        return run_batch(sys.stdin.buffer, sys.stdout, args)
    try:
        if args.plot:
            _plot_format(args.plot)  # a bad file name is an unusable input: found before any work
        world, gpn = _world(args.world_size, args.nodes, args.gpus_per_node)
        text = _read_input(args.file)
        report = validate(text, world_size=world, gpus_per_node=gpn, model=_model_arg(args), gpu=args.gpu,
                          lang=args.lang, recipe_checks=False if args.distributed_only else None)
    except UnusableInput as exc:
        return _usage(exc.message, exc.message_zh, args.lang, as_json=args.json)
    if args.json:
        print(json.dumps(report_json(report), ensure_ascii=False, allow_nan=False))
    else:
        print(render(report, args.lang))
    if args.plot:
        return _plot(report, args)
    return EXIT_VALID if report.ok else EXIT_INVALID


def _plot_format(path: str) -> None:
    from ui.plots.mesh import picture_format

    try:
        picture_format(path)
    except ValueError as exc:
        raise UnusableInput(f"--plot {exc}", f"--plot {path}：图片只能写成 .png 或 .svg") from None
    parent = Path(path).parent
    if not parent.is_dir():
        raise UnusableInput(f"--plot {path}: the folder {parent} does not exist", f"--plot {path}：目录 {parent} 不存在")


def _plot(report: ValidationReport, args: argparse.Namespace) -> int:
    """The picture of a valid layout; an invalid one has no mesh to draw (exit 1, no file)."""
    if not report.ok or report.derived is None:
        _say("no mesh to draw: the config is invalid at this world size (fix the errors above first)",
             "没有可画的 mesh：该配置在此 world_size 下不通过（请先修正上面的错误）", args.lang)
        return EXIT_INVALID
    d = report.derived
    if args.plot_view == "moe" and d.moe_mesh_shape is None:
        _say("no MoE mesh to draw: ep_size is 1 (use --plot-view mesh)", "没有可画的 MoE mesh：ep_size 为 1（请用 --plot-view mesh）",
             args.lang)
        return EXIT_UNUSABLE
    from ui.plots.mesh import axis_choices, mesh_picture, write_picture

    if args.plot_axis and args.plot_axis not in axis_choices(d):
        _say(f"--plot-axis {args.plot_axis}: this layout's mesh has {', '.join(axis_choices(d))}",
             f"--plot-axis {args.plot_axis}：该布局的 mesh 只有 {', '.join(axis_choices(d))}", args.lang)
        return EXIT_UNUSABLE
    picture = mesh_picture(d, report.gpus_per_node or DEFAULT_GPUS_PER_NODE, axis=args.plot_axis, view=args.plot_view, lang=args.lang)
    try:
        write_picture(picture, args.plot)
    except OSError as exc:
        _say(f"cannot write {args.plot}: {exc.strerror or exc}", f"无法写入 {args.plot}：{exc.strerror or exc}", args.lang)
        return EXIT_UNUSABLE
    if not args.json:
        _say(f"mesh picture written to {args.plot}", f"mesh 图已写入 {args.plot}", args.lang)
    return EXIT_VALID


def _say(en: str, zh: str, lang: str) -> None:
    print(f"meshwise validate: {zh if lang == 'zh' else en}", file=sys.stderr)


def _usage(en: str, zh: str, lang: str, *, as_json: bool = False) -> int:
    if as_json:
        print(json.dumps({"ok": None, "error": {"message": en, "message_zh": zh}}, ensure_ascii=False, allow_nan=False))
    else:
        print(f"meshwise validate: {zh if lang == 'zh' else en}", file=sys.stderr)
    return EXIT_UNUSABLE


def _world(world_size: int | None, nodes: int | None, gpus_per_node: int | None) -> tuple[int, int]:
    gpn = DEFAULT_GPUS_PER_NODE if gpus_per_node is None else gpus_per_node
    if gpn < 1:
        raise UnusableInput(f"--gpus-per-node must be >= 1, got {gpn}", f"--gpus-per-node 必须 >= 1，实际为 {gpn}")
    check_gpus_per_node(gpn)
    if world_size is not None and nodes is not None:
        if world_size != nodes * gpn:
            raise UnusableInput(f"--world-size {world_size} disagrees with --nodes {nodes} x --gpus-per-node {gpn} = {nodes * gpn}",
                                f"--world-size {world_size} 与 --nodes {nodes} x --gpus-per-node {gpn} = {nodes * gpn} 不一致")
    if world_size is None:
        if nodes is None:
            raise UnusableInput("give --world-size N, or --nodes N (with --gpus-per-node G, default 8)",
                                "请给出 --world-size N，或 --nodes N（配合 --gpus-per-node G，默认 8）")
        if nodes < 1:
            raise UnusableInput(f"--nodes must be >= 1, got {nodes}", f"--nodes 必须 >= 1，实际为 {nodes}")
        world_size = nodes * gpn
    return world_size, gpn


def check_gpus_per_node(gpn: Any) -> None:
    """The one limit every front end applies (a larger value is a world size typed in the wrong field)."""
    if isinstance(gpn, str) and gpn.strip().isdigit():  # validate() reads "16" as 16 too
        gpn = int(gpn.strip())
    if type(gpn) is int and gpn > MAX_GPUS_PER_NODE:
        raise UnusableInput(f"gpus_per_node must be at most {MAX_GPUS_PER_NODE}, got {gpn}",
                            f"gpus_per_node 最多为 {MAX_GPUS_PER_NODE}，实际为 {gpn}")


def _read_input(name: str | None) -> bytes:
    if name is None:
        raise UnusableInput("give a recipe file, or - to read standard input", "请给出 recipe 文件，或用 - 读取标准输入")
    if name == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        path = Path(name)
        try:
            with path.open("rb") as fh:
                data = fh.read(MAX_BYTES + 1)
        except OSError as exc:
            raise UnusableInput(f"cannot read {name}: {exc.strerror or exc}", f"无法读取 {name}：{exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise UnusableInput(f"input is larger than {MAX_BYTES} bytes (a recipe is a few KiB)",
                            f"输入超过 {MAX_BYTES} 字节（一个 recipe 通常只有几 KiB）")
    return data


def _model_arg(args: argparse.Namespace) -> str | None:
    return args.model_config or args.model


# ---------------------------------------------------------------------------------------------
# batch mode


def run_batch(stream, out: TextIO, args: argparse.Namespace) -> int:
    """One JSON report per input line, in order; a bad line gets an error object and the batch goes on."""
    for line_no, raw in enumerate(read_lines(stream, _LINE_LIMIT), 1):
        if raw is None:
            _emit(out, {"id": None, "ok": None, "error": _err(f"line longer than {_LINE_LIMIT} bytes", f"该行超过 {_LINE_LIMIT} 字节")})
            continue
        if not raw.strip():
            continue
        _emit(out, batch_line(raw, args, line_no))
    return EXIT_VALID


def batch_line(raw: bytes, args: argparse.Namespace, line_no: int = 1) -> dict:
    try:
        req = parse_line(raw, line_no)
    except ValueError as exc:
        return {"id": None, "ok": None, "error": _err(f"line is not JSON: {exc}", f"该行不是 JSON：{exc}")}
    if not isinstance(req, dict):
        return {"id": None, "ok": None, "error": _err("line must be a JSON object", "该行必须是 JSON 对象")}
    rid = req.get("id")
    try:
        if "yaml" in req:
            recipe: Any = req["yaml"]
            if not isinstance(recipe, str):
                raise UnusableInput('"yaml" must be a string', '"yaml" 必须是字符串')
        elif "config" in req:
            recipe = req["config"]
        else:
            raise UnusableInput('each line needs "yaml" or "config"', '每行需要 "yaml" 或 "config"')
        if "world_size" not in req:
            raise UnusableInput('each line needs "world_size"', '每行需要 "world_size"')
        for key in ("model", "gpu"):  # a name; validate() would take anything else for loaded facts
            if req.get(key) is not None and not isinstance(req[key], str):
                raise UnusableInput(f'"{key}" must be a string, got {describe(req[key])}',
                                    f'"{key}" 必须是字符串，实际为 {describe(req[key])}')
        gpn = req.get("gpus_per_node", args.gpus_per_node or DEFAULT_GPUS_PER_NODE)
        check_gpus_per_node(gpn)
        report = validate(
            recipe, world_size=req["world_size"], gpus_per_node=gpn,
            model=req.get("model", _model_arg(args)), gpu=req.get("gpu", args.gpu),
            recipe_checks=False if (req.get("distributed_only") or args.distributed_only) else None,
        )
    except UnusableInput as exc:
        return {"id": rid, "ok": None, "error": {"message": exc.message, "message_zh": exc.message_zh}}
    return {"id": rid, **report_json(report)}


def _err(en: str, zh: str) -> dict:
    return {"message": en, "message_zh": zh}


def _emit(out: TextIO, obj: dict) -> None:
    try:
        line = json_line(obj)
    except ValueError:  # NaN or Infinity somewhere in the report: that line's error, in strict JSON
        line = json_line({"id": obj.get("id"), "ok": None, "error": _err(
            "the report holds a value strict JSON cannot carry (NaN or Infinity)",
            "报告中含有严格 JSON 无法表示的值（NaN 或 Infinity）")})
    out.write(line + "\n")
    out.flush()


def report_json(report: ValidationReport) -> dict:
    d = report.to_dict()
    d["codes"] = report.codes
    return d


# ---------------------------------------------------------------------------------------------
# human-readable report

_L = {
    "en": {"valid": "VALID", "invalid": "INVALID", "at": "at world_size", "nodes": "nodes x", "node": "node x", "gpus": "GPUs",
           "strategy": "strategy", "mesh": "device mesh", "moe": "MoE mesh (ep_shard, ep), per pipeline stage",
           "ddp": "no device mesh (DDP replicates the model on every rank)", "gacc": "gradient accumulation steps",
           "errors": "Errors", "warnings": "Warnings", "mirrors": "mirrors", "memory": "Memory per GPU (estimate)",
           "fix": "Suggested fix (re-validated)", "nofix": "No automatic fix found.", "params": "params",
           "grads": "grads", "optim": "optimizer", "acts": "activations", "total": "total", "of": "of",
           "assume": "assumptions"},
    "zh": {"valid": "通过", "invalid": "不通过", "at": "world_size 为", "nodes": "节点 x", "node": "节点 x", "gpus": "GPU",
           "strategy": "strategy", "mesh": "device mesh", "moe": "MoE mesh (ep_shard, ep)，每个流水线阶段",
           "ddp": "无 device mesh（DDP 在每个 rank 上复制整个模型）", "gacc": "梯度累积步数",
           "errors": "错误", "warnings": "警告", "mirrors": "对应上游", "memory": "每 GPU 显存（估算）",
           "fix": "建议的修改（已重新校验）", "nofix": "没有找到自动修复方案。", "params": "参数",
           "grads": "梯度", "optim": "优化器状态", "acts": "激活", "total": "合计", "of": "/",
           "assume": "假设"},
}


def render(report: ValidationReport, lang: str = "en") -> str:
    t = _L["zh" if lang == "zh" else "en"]
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
    for title, findings in ((t["errors"], report.errors), (t["warnings"], report.warnings)):
        if not findings:
            continue
        lines.append(f"{title}:")
        for f in findings:
            msg = f.message_zh if lang == "zh" else f.message
            lines.append(f"  [{f.code}] {f.path + ': ' if f.path else ''}{msg}")
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
