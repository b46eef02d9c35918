"""A launch line read as the process it starts reads it.

- `automodel cfg.yaml [--nproc-per-node N] overrides` (also `am`, `uv run automodel`,
  `python -m nemo_automodel.cli.app`): cli/app.py's argparse (`config`, `--nproc-per-node` /
  `--nproc_per_node`, parse_known_args, abbreviations allowed) takes its two arguments; the rest goes
  to parse_cli_argv with the config as default. A single node: interactive.py runs N processes.
- `torchrun [torchrun options] -m nemo_automodel.cli.app cfg.yaml overrides`: the same app, under
  torchrun's `--nnodes` x `--nproc-per-node` (an elastic MIN:MAX is refused), the options parsed by
  argparse as torchrun declares them (torchrun_options.yaml: its flags, prefixes, PET_* defaults).
- `torchrun [options] recipes/llm/train_ft.py -c cfg overrides` (or any recipe script / module, or
  `python script.py -c cfg`, `python -m nemo_automodel.recipes.llm.train_ft --config cfg`): the script's
  parse_args_and_load_config reads all its arguments. With python alone nothing sets WORLD_SIZE, so
  initialize_distributed runs one process (init_utils.get_world_size_safe); the environment's WORLD_SIZE wins.
"""
from __future__ import annotations

import argparse
import os
from dataclasses import replace
from pathlib import Path
from typing import Mapping

from assistant.datafile import read_yaml

from assistant.launch import codes
from assistant.launch.overrides import split_argv
from assistant.launch.shell import expand, words
from assistant.launch.types import Launch, LaunchError, LaunchWarning, Override, WorldSize
from assistant.launch.counts import count, make

APP_MODULE = "nemo_automodel.cli.app"
APP_PROGRAMS = ("automodel", "am")
TORCHRUN_MODULES = ("torch.distributed.run", "torch.distributed.launch")
_PYTHONS = ("python", "python3")
_TORCHRUN = read_yaml(Path(__file__).resolve().parent / "torchrun_options.yaml")
_NPROC = ("--nproc-per-node", "--nproc_per_node")


class _ArgparseStop(Exception):
    pass


class _AppParser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print usage and exit 2
        raise _ArgparseStop(message)


def _app_parser() -> argparse.ArgumentParser:
    """cli/app.py build_parser: the same two arguments, so abbreviations and ordering behave the same."""
    p = _AppParser(prog="automodel", add_help=False)
    p.add_argument("config")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=None)
    return p


def _strip_prefixes(toks: list[str]) -> int:
    """Index of the program word: after `VAR=value` assignments and `uv run [uv options]`."""
    i = 0
    while i < len(toks) and "=" in toks[i] and not toks[i].startswith("-") and toks[i].split("=", 1)[0].isidentifier():
        i += 1
    if i + 1 < len(toks) and os.path.basename(toks[i]) == "uv" and toks[i + 1] == "run":
        i += 2
        while i < len(toks) and toks[i].startswith("-"):
            i += 1
    return i


def parse_launch_line(line: str, *, env: Mapping[str, str] | None = None) -> Launch:
    """The config path, overrides and world size of a launch line; `env` expands `$VAR` in it."""
    toks = words(expand(line, env) if env else line)
    i = _strip_prefixes(toks)
    if i >= len(toks):
        raise LaunchError("the launch line is empty", "启动命令为空")
    prog = os.path.basename(toks[i])
    if prog in APP_PROGRAMS:
        return _app(toks, i + 1, None, "automodel")
    if prog in _PYTHONS:
        if i + 1 < len(toks) and toks[i + 1] == "-m":
            mod = toks[i + 2] if i + 2 < len(toks) else ""
            if mod in TORCHRUN_MODULES:
                return _torchrun(toks, i + 3, env)
            if mod == APP_MODULE:
                return _app(toks, i + 3, None, "automodel")
            return _script(toks, i + 3, None, "script")
        if i + 1 < len(toks):
            if os.path.basename(toks[i + 1]) == "app.py":
                return _app(toks, i + 2, None, "automodel")
            return _script(toks, i + 2, None, "script")
    if prog == "torchrun":
        return _torchrun(toks, i + 1, env)
    raise LaunchError(
        f"cannot read a launch line that starts with {toks[i]!r}: use automodel / am, torchrun ... -m "
        f"{APP_MODULE}, torchrun ... a recipe script -c cfg, or python script.py -c cfg",
        f"无法读取以 {toks[i]!r} 开头的启动命令：请用 automodel / am、torchrun ... -m {APP_MODULE}、"
        "torchrun ... 配方脚本 -c cfg，或 python script.py -c cfg")


class _Said(argparse.Action):
    """Stores the value and keeps the order the world-sizing options were typed in (for the source text)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        namespace.said = [*(x for x in namespace.said if x[0] != self.dest), (self.dest, values)]


def _torchrun_parser() -> argparse.ArgumentParser:
    """torchrun's get_args_parser as data (torchrun_options.yaml): the same names, values and prefixes."""
    p = _AppParser(prog="torchrun", add_help=False)
    for names in _TORCHRUN["takes_value"]:
        sizes = names[0] in ("--nnodes", "--nproc-per-node")
        p.add_argument(*names, action=_Said if sizes else "store", default=None)
    for names in _TORCHRUN["flags"]:
        p.add_argument(*names, action="store_true")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _torchrun(toks: list[str], i: int, env: Mapping[str, str] | None = None) -> Launch:
    argv = toks[i:]
    warns: list[LaunchWarning] = []
    while True:
        try:
            args = _torchrun_parser().parse_args(argv, namespace=argparse.Namespace(said=[]))
            break
        except _ArgparseStop as exc:
            msg = str(exc)
            if "ambiguous option" in msg:
                # torchrun stops here too; said as the automodel line says it, and the option dropped
                option = msg.split("ambiguous option: ", 1)[1].split(" ", 1)[0].split("=", 1)[0]
                at = next((n for n, w in enumerate(argv) if w.split("=", 1)[0] == option), None)
                if at is not None:
                    gone = 2 if "=" not in argv[at] and at + 1 < len(argv) and not argv[at + 1].startswith("-") else 1
                    warns.append(codes.warning("MW-W-LAUNCH-AMBIGUOUS", " ".join(argv[at:at + gone]), option=option))
                    del argv[at:at + gone]
                    continue
            _no_substitution(argv)
            if "training_script" in msg:
                raise LaunchError("torchrun has no script or module to run", "torchrun 没有要运行的脚本或模块") from None
            raise LaunchError(f"torchrun's argument parser stops: {msg}", f"torchrun 的参数解析器报错退出：{msg}") from None
    at = len(toks) - len(args.training_script_args) - 1  # the script or module: REMAINDER holds every word after it
    said = [f"--{dest.replace('_', '-')} {value}" for dest, value in args.said]
    nnodes, nproc = args.nnodes, args.nproc_per_node
    for dest, var in _TORCHRUN["env_default"].items():  # torch's `env` action: PET_<DEST> is the default
        if getattr(args, dest) is None and env and env.get(var, "").strip():
            nnodes, nproc = (env[var], nproc) if dest == "nnodes" else (nnodes, env[var])
            said.append(f"{var}={env[var]} in the environment")
    try:
        world, more, error = *_torchrun_world(nnodes, nproc, " ".join(said)), None
    except LaunchError as exc:  # the world is unreadable, the rest of the line is not
        world, more, error = None, [], exc
    target = toks[at]
    if (args.module and target == APP_MODULE) or (not args.module and os.path.basename(target) == "app.py"):
        launch = _app(toks, at + 1, world, "torchrun-module", warns + more)
    else:
        launch = _script(toks, at + 1, world, "torchrun-script", warns + more)
    return replace(launch, world_error=error) if error is not None else launch


def _no_substitution(argv: list[str]) -> None:
    """A parser stopped on a line holding `$(...)` or backticks: the shell split the command's text into
    words the launcher never sees, so say that rather than the parser's complaint about one of them."""
    hit = next((w for w in argv if "$(" in w or "`" in w), None)
    if hit is not None:
        raise LaunchError(f"the launch line runs a command ({hit} ...) whose output Meshwise cannot know: "
                          "give its value with --env NAME=VALUE for a variable, or --world-size",
                          f"启动命令中含有命令替换（{hit} ...），Meshwise 无法得知其输出：变量请用 --env NAME=VALUE 给出，"
                          "或直接给出 --world-size")


def _resolved(value: str, what: str) -> str:
    if "$(" in value or "`" in value:
        raise LaunchError(f"{what} is {value!r}, a command's output that Meshwise cannot know: give --world-size",
                          f"{what} 为 {value!r}，是命令的输出，Meshwise 无法得知：请给出 --world-size")
    if "$" in value:
        raise LaunchError(f"{what} is {value!r}, a shell variable: give its value with --env NAME=VALUE (or --world-size)",
                          f"{what} 为 {value!r}，是 shell 变量：请用 --env NAME=VALUE 给出其值（或用 --world-size）")
    return value


def _torchrun_world(nnodes: str | None, nproc: str | None, said: str) -> tuple[WorldSize | None, list[LaunchWarning]]:
    n = count(_resolved(nnodes, "--nnodes"), "--nnodes", "--nnodes") if nnodes is not None else 1
    if nproc is not None and _resolved(nproc, "--nproc-per-node").strip() in ("gpu", "auto", "cpu", "xpu"):
        return None, [codes.warning("MW-W-LAUNCH-NPROC-LOCAL", f"--nproc-per-node {nproc}")]
    g = count(nproc, "--nproc-per-node", "--nproc-per-node") if nproc is not None else 1  # torchrun's default is 1
    where = said or "no --nnodes / --nproc-per-node (torchrun's defaults: 1 x 1)"
    return make(n, g, f"torchrun {where} on the launch line", f"启动命令中的 torchrun {where}"), []


_ONE_PROCESS = make(1, 1, "python with no torchrun: one process (WORLD_SIZE unset is 1: init_utils.py "
                         "get_world_size_safe)",
                    "不经 torchrun 直接用 python 运行：单进程（未设置 WORLD_SIZE 时为 1：init_utils.py get_world_size_safe）")


def _script(toks: list[str], i: int, world: WorldSize | None, form: str,
            warns: list[LaunchWarning] | None = None) -> Launch:
    config, overrides, w = split_argv(toks[i:], offset=i)
    return Launch(config_path=config, overrides=overrides, world=world, warnings=tuple((warns or []) + list(w)),
                  tokens=tuple(toks), form=form, fallback_world=_ONE_PROCESS if form == "script" else None)


def _app(toks: list[str], i: int, world: WorldSize | None, form: str,
         warns: list[LaunchWarning] | None = None) -> Launch:
    warnings = list(warns or [])
    argv = toks[i:]
    keep = list(range(len(argv)))  # positions in argv of the words argparse sees
    nproc_typed, world_error = _unreadable_nproc(argv, keep)
    while True:
        try:
            args, extra = _app_parser().parse_known_args([argv[k] for k in keep])
            break
        except _ArgparseStop as exc:
            msg = str(exc)
            if "ambiguous option" not in msg:
                _no_substitution([argv[k] for k in keep])
                raise LaunchError(f"automodel's argument parser stops: {msg}", f"automodel 的参数解析器报错退出：{msg}") from None
            option = msg.split("ambiguous option: ", 1)[1].split(" ", 1)[0].split("=", 1)[0]
            at = next(n for n, k in enumerate(keep) if argv[k].split("=", 1)[0] == option)
            gone = 2 if "=" not in argv[keep[at]] and at + 1 < len(keep) and not argv[keep[at + 1]].startswith("-") else 1
            shown = " ".join(argv[keep[x]] for x in range(at, at + gone))
            warnings.append(codes.warning("MW-W-LAUNCH-AMBIGUOUS", shown, option=option))
            del keep[at:at + gone]
    # map each word argparse left over back to its place in the line: argparse takes the
    # --nproc-per-node option (and its value) and the first word it can use as the config; the
    # rest keeps its order
    seen = [argv[x] for x in keep]
    rest = [x for n, x in enumerate(keep) if not _is_nproc(seen, n)]
    cfg_at = next((x for x in rest if argv[x] == args.config), None)
    rest = [x for x in rest if x != cfg_at]
    pos = [i + x for x in rest] if [argv[x] for x in rest] == extra else None
    config, overrides, w = split_argv(extra, config=args.config)
    if pos is not None:
        for o in overrides:
            if cfg_at is not None and o.span and pos[o.span[0]] < i + cfg_at:
                warnings.append(codes.warning("MW-W-LAUNCH-BEFORE-CONFIG", o.argument, config=args.config, path=o.path,
                                              value=o.raw))
        overrides = tuple(_respan(o, pos) for o in overrides)
    warnings.extend(w)
    nproc_arg = None
    if args.nproc_per_node is not None:
        nproc_arg = next((f"{a} {b}" if "=" not in a else a for a, b in zip(seen, seen[1:] + [""])
                          if _nproc_name(a)), f"--nproc-per-node {args.nproc_per_node}")
        if world is None:
            n = count(args.nproc_per_node, "--nproc-per-node", "--nproc-per-node")
            world = make(1, n, f"{nproc_arg} on the launch line (one node)", f"启动命令中的 {nproc_arg}（单节点）")
    if nproc_arg is None and nproc_typed is not None:
        nproc_arg = nproc_typed
    return Launch(config_path=config, overrides=overrides, world=world, warnings=tuple(warnings), tokens=tuple(toks),
                  form=form, nproc_argument=nproc_arg, world_error=world_error if world is None else None)


def _unreadable_nproc(argv: list[str], keep: list[int]) -> tuple[str | None, LaunchError | None]:
    """`--nproc-per-node $G` / `$(...)`: the shell gives the value, so argparse's int() never sees it.
    The option (and its value) leaves `keep`; its error stands in for the world size the line cannot give."""
    typed = error = None
    n = 0
    while n < len(keep):
        word = argv[keep[n]]
        name, eq, value = word.partition("=")
        if name in _NPROC or (len(name) > len("--nproc") and sum(o.startswith(name) for o in _NPROC) == 1):
            if not eq and n + 1 < len(keep):
                value = argv[keep[n + 1]]
            if "$" in value or "`" in value:
                typed = word if eq else f"{word} {value}"
                try:
                    _resolved(value, "--nproc-per-node")
                except LaunchError as exc:
                    error = exc
                del keep[n:n + (1 if eq else 2)]
                continue
        n += 1
    return typed, error


def _nproc_name(word: str) -> bool:
    name = word.split("=", 1)[0]
    return len(name) > 2 and any(o.startswith(name) for o in _NPROC)


def _is_nproc(seen: list[str], n: int) -> bool:
    """Whether seen[n] is the --nproc-per-node option argparse takes (or the value after it)."""
    if _nproc_name(seen[n]):
        return True
    return n > 0 and _nproc_name(seen[n - 1]) and "=" not in seen[n - 1]


def _respan(o: Override, pos: list[int]) -> Override:
    if o.span is None:
        return o
    s, e = o.span
    contiguous = pos[e - 1] - pos[s] == e - 1 - s  # not so when argparse took a word from between them
    return replace(o, span=(pos[s], pos[e - 1] + 1) if contiguous else None)
