"""`meshwise validate`'s input side: the recipe, overrides, environment and world size as the launch
gives them (assistant/launch), turned into the call's targets (validate_files.Target: the recipe after
overrides, the overrides for the findings they cause, where the world size came from), and what the
report adds about the launch (its warnings, the fix as override flags and as the edited launch line)."""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Callable, Sequence

import yaml

from assistant.cli.validate_argv import regroup
from assistant.cli.validate_files import NO_CI_SECTION, NOT_A_RECIPE, Checked, Skip, Target, read_input
from assistant.defaults import DEFAULT_GPUS_PER_NODE
from assistant.launch import Launch, LaunchError, WorldSize, codes, edited_line, fix_as_overrides
from assistant.launch.as_launched import not_expressible
from assistant.launch.env_vars import parse_env_pairs
from assistant.launch.launch_line import parse_launch_line
from assistant.launch.overrides import split_argv
from assistant.launch.resolve import Resolved, resolve
from assistant.launch.sbatch import MAX_SCRIPT, parse_sbatch
from assistant.launch.types import LaunchWarning
from assistant.launch.counts import make
from assistant.validator import UnusableInput, ValidationReport, check_world, is_recipe_like, is_whole_recipe
from assistant.validator import coerce

# upstream's loader masks values of these keys when it prints a config (loader.py SENSITIVE_KEY_SUBSTRINGS)
_SENSITIVE = ("password", "secret", "token", "apikey", "api_key", "authorization", "auth")
_NO_WORLD = (
    "give --world-size N, or --nodes N (with --gpus-per-node G, default 8), or a launch that says it: "
    "--launch \"automodel cfg.yaml --nproc-per-node N\", --sbatch job.sub, --ci, --env WORLD_SIZE=N",
    "请给出 --world-size N，或 --nodes N（配合 --gpus-per-node G，默认 8），或能说明规模的启动方式："
    "--launch \"automodel cfg.yaml --nproc-per-node N\"、--sbatch job.sub、--ci、--env WORLD_SIZE=N")
_NO_CI = ("--ci: the recipe has no ci: section, and nothing else gives the world size (--world-size, --launch, "
          "--sbatch, --env WORLD_SIZE=N)",
          "--ci：recipe 中没有 ci: 段，也没有其他来源给出 world size（--world-size、--launch、--sbatch、--env WORLD_SIZE=N）")
# automodel's and torchrun's own options (cli/app.py build_parser, torchrun): typed after `meshwise validate
# FILE`, each would only set a recipe key of that name
_LAUNCHER_FLAGS = frozenset({"nproc-per-node", "nproc_per_node", "nnodes", "nproc", "standalone"})
_L = {
    "en": {"launch": "Launch", "flags": "The same fix as override flags", "line": "The same fix as the edited launch line",
           "yaml_only": "Edit in the YAML (an override cannot remove a key)"},
    "zh": {"launch": "启动", "flags": "同一修改的覆盖参数写法", "line": "同一修改的启动命令写法",
           "yaml_only": "需在 YAML 中修改（覆盖参数无法删除键）"},
}


def add_launch_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("where it is launched", "Override arguments (--distributed.pp_size 2, "
                             "--step_scheduler.local_batch_size=8), before or after the files, are read as NeMo "
                             "AutoModel reads them.")
    src = g.add_mutually_exclusive_group()
    src.add_argument("--launch", metavar="LINE",
                     help='the launch line: "automodel cfg.yaml --nproc-per-node 4 --distributed.tp_size 2", '
                          "torchrun ... -m nemo_automodel.cli.app cfg.yaml ..., torchrun ... recipes/llm/train_ft.py -c cfg.yaml ...")
    src.add_argument("--sbatch", metavar="FILE", help="an sbatch script (#SBATCH -N / --gpus-per-node / --gres, CONFIG=, the torchrun line)")
    g.add_argument("--ci", action="store_true", help="check at the recipe's own ci: section (nodes x GPUs per node, "
                   "its overrides), as upstream's CI runs it; a recipe with none is checked at the world size given "
                   "(--world-size, the launch, the environment), else skipped and said so (exit 0)")
    g.add_argument("--require-ci", action="store_true",
                   help="with --ci: a recipe with no ci: section and no other world size is an error (exit 2), not a skip")
    g.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="an environment variable for ${VAR} references and WORLD_SIZE / SLURM_* (repeatable)")
    g.add_argument("--shell-env", action="store_true", help="also read this shell's environment (off by default)")
    g.add_argument("--print-config", action="store_true",
                   help="print the recipe as resolved (environment, then overrides; secrets masked) and exit")
    p.set_defaults(_accepts_extra=True, _regroup=partial(regroup, p))


def launch_inputs(args: argparse.Namespace) -> bool:
    """Whether the call says anything about the launch (else validate reads its files as before)."""
    return bool(getattr(args, "_extra", None) or args.launch is not None or args.sbatch is not None or args.ci
                or args.require_ci or args.env or args.shell_env or args.print_config)


class NotChecked(Exception):
    """A file the call says nothing can be judged about: skipped, with why (en, zh), exit 0."""

    def __init__(self, reason: Skip):
        super().__init__(reason.en)
        self.reason = reason


@dataclass(frozen=True)
class Launched:
    resolved: Resolved
    world: WorldSize
    launch: Launch | None

    @property
    def world_size(self) -> int:
        return self.world.world_size

    @property
    def gpus_per_node(self) -> int:
        return self.world.gpus_per_node or DEFAULT_GPUS_PER_NODE

    @property
    def warnings(self) -> tuple[LaunchWarning, ...]:
        return self.resolved.warnings

    def config_text(self) -> str:
        recipe = self.resolved.recipe
        cfg = coerce.load_config(recipe)[0] if isinstance(recipe, dict) else recipe
        return yaml.safe_dump(_plain(_redact(cfg)), sort_keys=False, allow_unicode=True)

    def fix_flags(self, report: ValidationReport) -> tuple[list[str], list[str], str | None]:
        """The suggested fix as override flags, the paths no flag can carry, and the edited launch line."""
        text = report.suggested_fix if not report.ok else None
        if not text:
            return [], [], None
        fixed = coerce.load_yaml(text)
        current = self.resolved.recipe
        if not isinstance(fixed, dict) or not isinstance(current, dict):
            return [], [], None
        if not is_whole_recipe(current):
            current, fixed = {"distributed": current}, {"distributed": fixed}
        current, _ = coerce.load_config(current)
        flags = fix_as_overrides(current, fixed)
        line = edited_line(self.launch, flags) if self.launch is not None and self.launch.tokens else None
        return flags, not_expressible(current, fixed), line

    def json(self, report: ValidationReport | None) -> dict:
        flags, manual, line = self.fix_flags(report) if report is not None else ([], [], None)
        return {
            "world_source_zh": self.world.source_zh,
            "overrides": [{"path": o.path, "value": o.value, "argument": o.argument, "index": o.index}
                          for o in self.resolved.overrides],
            "launch_warnings": [{"code": w.code, "message": w.en, "message_zh": w.zh, "argument": w.argument,
                                 "upstream": w.upstream} for w in self.warnings],
            "fix_overrides": flags, "fix_yaml_only": manual, "fix_launch_line": line,
        }

    def notes(self, report: ValidationReport | None, lang: str) -> list[str]:
        t = _L["zh" if lang == "zh" else "en"]
        lines: list[str] = []
        if self.warnings:
            lines.append(f"{t['launch']}:")
            lines.extend(f"  [{w.code}] {w.zh if lang == 'zh' else w.en}" for w in self.warnings)
        flags, manual, line = self.fix_flags(report) if report is not None else ([], [], None)
        if flags:
            lines += [f"{t['flags']}:", "  " + " ".join(flags)]
        if line:
            lines += [f"{t['line']}:", "  " + line]
        if manual:
            lines.append(f"{t['yaml_only']}: {', '.join(manual)}")
        return lines


def with_launch_notes(fmt: str, out: str, results: Sequence[Checked], launches: Sequence[Launched | None],
                      lang: str) -> str:
    """The formatted output with what the launch adds: a text block after the reports, JSON keys per report
    (none for a file that could not be read as launched)."""
    if fmt == "text":
        extra = []
        for c, launched in zip(results, launches):
            lines = launched.notes(c.report, lang) if launched is not None else []
            if lines and len(results) > 1:  # say which target they are about, as the report blocks do
                lines.insert(0, f"== {c.target.file} @ world_size {c.target.world_size} ({_L[lang if lang == 'zh' else 'en']['launch']}) ==")
            extra.extend(lines)
        return "\n".join(x for x in (out, *extra) if x)
    if fmt == "json":
        d = json.loads(out)
        for node, c, launched in zip(d["reports"] if "reports" in d else [d], results, launches):
            if launched is not None:
                node.update(launched.json(c.report))
        return json.dumps(d, ensure_ascii=False, default=str, allow_nan=False)
    return out


def _redact(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: "******" if any(s in str(k).lower() for s in _SENSITIVE) else _redact(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_redact(x) for x in v]
    return v


def _plain(v: Any) -> Any:
    """Only what yaml.safe_dump writes (a tuple or set from a literal becomes a list; else its text)."""
    if isinstance(v, dict):
        return {k if isinstance(k, (str, int, float, bool)) or k is None else str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return repr(v)


def _read_text(name: str, what: str, what_zh: str, limit: int) -> str:
    try:
        with Path(name).open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise LaunchError(f"cannot read {what} {name}: {exc.strerror or exc}",
                          f"无法读取{what_zh} {name}：{exc.strerror or exc}") from None
    if len(data) > limit:
        raise LaunchError(f"{what} {name} is larger than {limit} bytes", f"{what_zh} {name} 超过 {limit} 字节")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise LaunchError(f"{what} {name} is not UTF-8 text", f"{what_zh} {name} 不是 UTF-8 文本") from None


def _environment(args: argparse.Namespace) -> dict[str, str] | None:
    if not args.env and not args.shell_env:
        return None  # the launch environment is unknown: ${VAR} with no default stays a warning
    env: dict[str, str] = {}
    if args.shell_env:
        from assistant.config import shell_environment

        env.update(shell_environment())
    env.update(parse_env_pairs(args.env))
    return env


def _explicit(args: argparse.Namespace, world_size: int | None, world_of_flags: Callable) -> WorldSize | None:
    if world_size is None and args.nodes is None:
        if args.gpus_per_node is not None and args.gpus_per_node < 1:
            world_of_flags(None, 1, args.gpus_per_node)  # the flag's own error
        return None
    world, gpn = check_world(*world_of_flags(world_size, args.nodes, args.gpus_per_node))
    said = f"--world-size {world}" if world_size is not None else f"--nodes {args.nodes} x --gpus-per-node {gpn}"
    return make(world // gpn if world % gpn == 0 else None, gpn, f"{said} on the command line", f"命令行参数 {said}",
                world_size=world)


def read_launched(args: argparse.Namespace, name: str | None, launch: Launch | None, env: dict[str, str] | None,
                  explicit: WorldSize | None) -> Launched:
    """One file as launched: raises UnusableInput (exit 2) on any bad input."""
    _, typed, typed_warnings = split_argv(getattr(args, "_extra", None) or [])
    typed_warnings += tuple(codes.warning("MW-W-LAUNCH-LAUNCHER-FLAG", o.argument, path=o.path, value=o.value)
                            for o in typed if o.path in _LAUNCHER_FLAGS)
    try:
        data = coerce.load_yaml(read_input(name))
    except UnusableInput as exc:
        if explicit is None and (launch is None or (launch.world or launch.fallback_world) is None) and env is None and not args.ci \
                and not args.print_config:
            # nothing says the world size either: say that first, as validate always has
            raise UnusableInput(f"{_NO_WORLD[0]} (and: {exc.message})", f"{_NO_WORLD[1]}（另外：{exc.message_zh}）") from None
        raise
    resolved = resolve(data, launch=launch, overrides=typed, env=env, ci=args.ci, explicit=explicit)
    if typed_warnings:
        resolved = Resolved(resolved.recipe, resolved.loaded, resolved.overrides, resolved.world,
                            resolved.warnings + typed_warnings)
    world = resolved.world
    if world is None:
        if args.print_config:
            world = make(None, None, "not needed to print the config", "打印配置不需要 world size", world_size=1)
        elif args.ci and not is_recipe_like(resolved.recipe):
            raise NotChecked(NOT_A_RECIPE)
        elif args.ci and not args.require_ci:
            raise NotChecked(NO_CI_SECTION)
        elif args.ci:
            raise UnusableInput(*_NO_CI)
        else:
            raise _with_warnings(UnusableInput(*_NO_WORLD), typed_warnings)
    if world.gpus_per_node is None and args.gpus_per_node is not None:
        world = WorldSize(world.world_size, args.gpus_per_node, world.nodes, world.source, world.source_zh)
    return Launched(resolved=resolved, world=world, launch=launch)


def launch_targets(args: argparse.Namespace, world_of_flags: Callable) -> tuple[list[Target], list[Launched]]:
    """Each file (the launch's config when none is named) at each world size, as launched."""
    explicit = [_explicit(args, w, world_of_flags) for w in (args.world_size or [None])]  # bad flags before any file
    env = _environment(args)
    launch = None
    if args.launch is not None:
        launch = parse_launch_line(args.launch, env=env)
    elif args.sbatch is not None:
        launch = parse_sbatch(_read_text(args.sbatch, "sbatch script", "sbatch 脚本", MAX_SCRIPT))
    files = args.file or ([launch.config_path] if launch and launch.config_path else [None])
    if launch is not None and launch.config_path is None and not args.file:
        raise LaunchError("the launch line names no config file", "启动命令中没有 config 文件")
    if args.require_ci and not args.ci:
        raise LaunchError("--require-ci goes with --ci", "--require-ci 需与 --ci 一起使用")
    targets, launches, seen = [], [], set()
    for name in files:
        for e in explicit:
            try:
                launched = read_launched(args, name, launch, env, e)
            except NotChecked as skip:
                if name not in seen:  # said once per file, not once per world size
                    seen.add(name)
                    targets.append(Target(name, None, None, skipped=skip.reason))
                    launches.append(None)
                continue
            except UnusableInput as exc:
                if args.print_config:
                    raise
                # this file's error: the other files are still checked and reported (exit 2 is the worst)
                targets.append(Target(name, e.world_size if e else None, e.gpus_per_node if e else None,
                                      error=_with_warnings(exc, launch.warnings if launch else ())))
                launches.append(None)
                continue
            w = launched.world
            if (name, w.world_size, w.gpus_per_node, w.source) in seen:
                continue  # `--ci --world-size 8,16`: the ci: section gives one world whatever the fallbacks
            seen.add((name, w.world_size, w.gpus_per_node, w.source))
            source = launched.world.source_zh if args.lang == "zh" else launched.world.source
            targets.append(Target(name, launched.world_size, launched.gpus_per_node, overrides=launched.resolved.overrides,
                                  recipe=launched.resolved.recipe, world_source=source))
            launches.append(launched)
    return targets, launches


def _with_warnings(exc: UnusableInput, warnings: Sequence[LaunchWarning]) -> UnusableInput:
    """The error with what the launch's warnings explain: `automodel --a.b 2 cfg.yaml` cannot read `2`
    because argparse took it as the config, `--nproc-per-node gpu` gives no world size."""
    if not warnings:
        return exc
    return UnusableInput(" ".join([exc.message, *(f"[{w.code}] {w.en}" for w in warnings)]),
                         " ".join([exc.message_zh, *(f"[{w.code}] {w.zh}" for w in warnings)]))

