"""The files of one `meshwise validate` call, each checked at its own world size.

A `Target` is one (file, world size) pair; a file checked at several world sizes is several targets.
`check` reads the file (byte cap before the body), validates it and places each finding
(validator/locate.py); an unusable file is that target's error, never the end of the call. The call's
exit code is the worst of its targets: 2 unusable > 1 invalid (or, with fail_on_warnings, a warning) > 0.
A file whose YAML is no recipe (validator.is_recipe_like: a workflow, a .pre-commit-config.yaml) is skipped
and says so, exit 0: a pre-commit hook over every YAML file of a repository meets many of them.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, NamedTuple, Sequence

from assistant.launch.meshes import validate_meshes
from assistant.validator import UnusableInput, ValidationReport, check_world, is_recipe_like
from assistant.validator.coerce import MAX_BYTES, load_yaml
from assistant.validator.locate import Location, locate_report
from assistant.validator.report import Finding

EXIT_VALID, EXIT_INVALID, EXIT_UNUSABLE = 0, 1, 2


class Skip(NamedTuple):
    """Why nothing was judged about a file (exit 0): the message in both languages and a stable reason."""
    en: str
    zh: str
    reason: str  # "not-a-recipe" or "no-ci-section" (validate.schema.json)


NOT_A_RECIPE = Skip("not a recipe (no recipe section such as distributed: or model:, and no distributed key), skipped",
                    "不是 recipe（没有 distributed:、model: 等 recipe 段，也没有 distributed 字段），已跳过", "not-a-recipe")

# `--ci` over a folder: upstream's CI never runs a recipe with no ci: section, so there is no CI world to check
# it at; a pre-commit or CI sweep over every file meets many (--require-ci makes it an error instead)
NO_CI_SECTION = Skip("no ci: section and no world size given (--world-size, --launch, --env WORLD_SIZE=N), not checked; "
                     "skipped (--require-ci to fail instead)",
                     "没有 ci: 段，也没有给出 world size（--world-size、--launch、--env WORLD_SIZE=N），未校验，已跳过"
                     "（加 --require-ci 则报错）", "no-ci-section")


@dataclass(frozen=True)
class Target:
    file: str | None  # as given on the command line; "-" is standard input; None: text or data with no file
    world_size: int | None  # None only for a target with an error and no world size
    gpus_per_node: int | None
    # the launch line's overrides (objects with .path, .argument, .index), for the findings they cause
    overrides: Sequence[Any] = ()
    # the recipe to validate when it is not the file's text as read (the file after overrides and
    # environment); the findings are still placed in the file's own text
    recipe: Any = None
    world_source: str | None = None  # where the world size came from, when not the flags
    # the file could not be read as launched (not YAML, an unset ${VAR}, no ci: section with --ci, no world
    # size): this target's error, as an unreadable file is; world_size and gpus_per_node may then be None
    error: UnusableInput | None = None
    skipped: Skip | None = None  # nothing was judged, and why (NO_CI_SECTION, NOT_A_RECIPE)


@dataclass(frozen=True)
class Checked:
    target: Target
    report: ValidationReport | None
    located: tuple[tuple[Finding, Location], ...] = ()
    error: UnusableInput | None = None  # the input could not be read or is not a recipe
    skipped: Skip | None = None  # nothing was judged: the YAML is no recipe, or --ci found no CI world

    def exit_code(self, fail_on_warnings: bool = False) -> int:
        if self.skipped is not None:
            return EXIT_VALID
        if self.error is not None or self.report is None:
            return EXIT_UNUSABLE
        if not self.report.ok or (fail_on_warnings and self.report.warnings):
            return EXIT_INVALID
        return EXIT_VALID


def read_input(name: str | None) -> bytes:
    if name is None:
        raise UnusableInput("give a recipe file, or - to read standard input", "请给出 recipe 文件，或用 - 读取标准输入")
    if name == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        try:
            with Path(name).open("rb") as fh:
                data = fh.read(MAX_BYTES + 1)
        except OSError as exc:
            raise UnusableInput(f"cannot read {name}: {exc.strerror or exc}", f"无法读取 {name}：{exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise UnusableInput(f"input is larger than {MAX_BYTES} bytes (a recipe is a few KiB)",
                            f"输入超过 {MAX_BYTES} 字节（一个 recipe 通常只有几 KiB）")
    return data


def check(target: Target, text: bytes | None = None, **validate_kw: Any) -> Checked:
    """One target: its verdict and the place of every finding, or the reason it is unusable."""
    try:
        if text is None and target.file is not None:
            text = read_input(target.file)
        recipe = text if target.recipe is None else target.recipe
        if isinstance(recipe, (bytes, bytearray)):
            check_world(target.world_size, target.gpus_per_node)  # a bad world size is said before the text
            recipe = load_yaml(recipe)  # locate.py reuses the tree of this last text read
        if not is_recipe_like(recipe):
            return Checked(target, None, skipped=NOT_A_RECIPE)
        # the meshes the launch builds: one, KD's student + teacher, or none (assistant/launch/meshes.py)
        report = validate_meshes(recipe, world_size=target.world_size, gpus_per_node=target.gpus_per_node, **validate_kw)
    except UnusableInput as exc:
        return Checked(target, None, error=exc)
    if text is None:
        return Checked(target, report)  # data with no text: nothing to point at
    return Checked(target, report, tuple(locate_report(report, text, target.file, target.overrides)))


def check_all(targets: Iterable[Target], **validate_kw: Any) -> list[Checked]:
    """Every target in order; a file named for several world sizes is read once."""
    texts: dict[str, bytes | UnusableInput] = {}
    out = []
    for t in targets:
        if t.error is not None:
            out.append(Checked(t, None, error=t.error))
            continue
        if t.skipped is not None:
            out.append(Checked(t, None, skipped=t.skipped))
            continue
        if t.file not in texts:
            try:
                texts[t.file] = read_input(t.file)
            except UnusableInput as exc:
                texts[t.file] = exc
        text = texts[t.file]
        out.append(Checked(t, None, error=text) if isinstance(text, UnusableInput) else check(t, text, **validate_kw))
    return out


def worst(results: Iterable[Checked], fail_on_warnings: bool = False) -> int:
    return max((r.exit_code(fail_on_warnings) for r in results), default=EXIT_VALID)
