"""`meshwise validate`: check a NeMo AutoModel recipe (or bare distributed: mapping) at a world size.

Any number of files, each at each world size given (`--world-size 8,16`); the exit code is the
worst of them: 0 valid, 1 invalid (or warned, with --fail-on-warnings), 2 unusable input. Output as
text, JSON, GitHub annotations, SARIF or JUnit (report_formats.py). `--json --stdin` is a JSON-lines
batch mode: one request per line in, one report per line out, in order.

Where the job is launched: override arguments after the file (`--distributed.pp_size 2`), `--launch
"automodel cfg.yaml --nproc-per-node 4 ..."`, `--sbatch job.sub`, `--ci`, `--env NAME=VALUE`: read by
assistant/launch exactly as upstream reads them (validate_input.py); the world size says where it came from.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from assistant.cli.jsonlines import json_line, parse_line, read_lines
from assistant.cli.report_formats import FORMATS, error_json, formatted, render, report_json, unusable_lines
from assistant.cli.validate_input import add_launch_arguments, launch_inputs, launch_targets, with_launch_notes
from assistant.cli.validate_files import EXIT_INVALID, EXIT_UNUSABLE, EXIT_VALID, Target, check_all, worst
from assistant.defaults import DEFAULT_GPUS_PER_NODE, MAX_GPUS_PER_NODE
from assistant.validator import UnusableInput, ValidationReport, validate
from assistant.validator.coerce import MAX_BYTES
from assistant.validator.locate import locate_report
from assistant.validator.rules import describe

__all__ = ["add_parser", "run", "render", "report_json", "EXIT_VALID", "EXIT_INVALID", "EXIT_UNUSABLE"]
PLOT_AXES = ("tp", "pp", "dp_shard", "dp_replicate", "cp", "dp")  # those a layout lacks are refused after validation
_LINE_LIMIT = 4 * MAX_BYTES  # a JSON line carries the YAML escaped


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "validate",
        help="check a recipe's distributed sizing against NeMo AutoModel's start-up rules",
        description="Validate a NeMo AutoModel recipe (or a bare distributed: mapping) at a world size. "
        "Exit 0 valid, 1 invalid, 2 unusable input.",
    )
    p.add_argument("file", nargs="*", help="recipe YAML files (any number), or - for standard input")
    p.add_argument("--world-size", type=_world_sizes, metavar="N[,N...]",
                   help="total number of GPUs (ranks); several, comma-separated, check every file at each")
    p.add_argument("--nodes", type=int, help="number of nodes (world size = nodes * gpus-per-node)")
    p.add_argument("--gpus-per-node", type=int, default=None, help="GPUs per node (default 8)")
    m = p.add_mutually_exclusive_group()
    m.add_argument("--model", help="a bundled model name for model-aware checks and the memory estimate")
    m.add_argument("--model-config", help="path to a Hugging Face config.json")
    p.add_argument("--gpu", help="GPU name for the memory estimate, e.g. h100-80gb")
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="language of the human-readable report")
    p.add_argument("--json", action="store_true", help="print the report as JSON (same as --format json)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="text (default), json, github (workflow annotations + the report), sarif (2.1.0, code scanning) "
                        "or junit (one test case per file and world size)")
    p.add_argument("--fail-on-warnings", action="store_true", help="exit 1 when a file has warnings, even if it is valid")
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
    add_launch_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    fmt = "json" if args.json and args.format in (None, "json") else (args.format or "text")
    if args.stdin:
        if fmt != "json":
            return _usage("--stdin batch mode needs --json", "--stdin 批处理模式需要同时使用 --json", args.lang)
        if launch_inputs(args):
            # each batch line carries its own world size; a launch given once would be silently ignored
            return _usage("--stdin batch mode takes no overrides, --launch, --sbatch, --ci, --env or --print-config",
                          "--stdin 批处理模式不接受覆盖参数、--launch、--sbatch、--ci、--env 或 --print-config", args.lang)
        return run_batch(sys.stdin.buffer, sys.stdout, args)
    launches = None
    try:
        if args.plot:
            _plot_format(args.plot)  # a bad file name is an unusable input: found before any work
        if launch_inputs(args):
            targets, launches = launch_targets(args, _world)
            if args.print_config:
                print("".join(launched.config_text() for launched in launches), end="")
                return EXIT_VALID
        else:
            targets = _targets(args)
    except UnusableInput as exc:
        return _usage(exc.message, exc.message_zh, args.lang, as_json=fmt == "json")
    results = check_all(targets, model=_model_arg(args), gpu=args.gpu, lang=args.lang,
                        recipe_checks=False if args.distributed_only else None)
    code = worst(results, args.fail_on_warnings)
    if fmt == "text" or fmt == "github":
        for line in unusable_lines(results, args.lang):
            print(f"meshwise validate: {line}", file=sys.stderr)
    out = formatted(fmt, results, code, args.lang, args.fail_on_warnings)
    if launches is not None:
        out = with_launch_notes(fmt, out, results, launches, args.lang)
    if out:
        print(out)
    if args.plot and results[0].report is not None:
        return _plot(results[0].report, args)
    return code


def _targets(args: argparse.Namespace) -> list[Target]:
    """Each file at each world size the flags give, in the order named."""
    files = args.file or [None]
    if args.plot and (len(files) > 1 or len(args.world_size or ()) > 1):
        raise UnusableInput("--plot draws one layout: give one file and one world size",
                            "--plot 只画一个布局：请只给一个文件和一个 world size")
    if None in files:
        raise UnusableInput("give a recipe file, or - to read standard input", "请给出 recipe 文件，或用 - 读取标准输入")
    if files.count("-") > 1:
        raise UnusableInput("standard input (-) can be read once", "标准输入（-）只能读取一次")
    worlds = [_world(w, args.nodes, args.gpus_per_node) for w in (args.world_size or [None])]
    return [Target(f, w, gpn) for f in files for w, gpn in worlds]


def _world_sizes(text: str) -> list[int]:
    try:
        sizes = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N or N,N,... (integers), got {text!r}") from None
    if not sizes:
        raise argparse.ArgumentTypeError("expected at least one world size")
    return sizes


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
        print(json.dumps(error_json(en, zh), ensure_ascii=False, allow_nan=False))
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
    text = recipe if isinstance(recipe, str) else None  # a "config" object has no lines to point at
    return {"id": rid, **report_json(report, locate_report(report, text))}


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
