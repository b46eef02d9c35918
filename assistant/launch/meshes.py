"""The meshes a launch builds, when that is not the one `distributed:` mesh at the whole world size.

- Knowledge distillation with `separate_meshes: true` (recipes/kd_utils.py create_kd_distributed_setups):
  the student (`distributed`) and the teacher (`teacher_distributed`) each need an explicit dp_size,
  their sizes dp*tp*pp*cp must add up to the world, DDP is refused, and each mesh is built at its own
  size (student ranks first), an offloaded teacher is refused (kd.py setup); the report's `meshes` holds the teacher's. Without it the teacher is built
  on the student's mesh (recipes/llm/kd.py setup), which `meshes` says.
- A generate config (examples/diffusion/generate/generate.py) with `distributed: null`: generate.py
  skips the distributed setup, so there is no mesh to check.
- A speculative-decoding recipe (mesh_optional.yaml: Eagle, DFlash, ...) with no `distributed:` section:
  it builds no mesh and runs DDP over the world.
- A recipe that never builds a mesh (no_mesh_recipes.yaml: hard-negative mining reads only `dist_env:`),
  named by `recipe:` or, in a config its script loads with no `recipe:` key, by its own section (`mining:`).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping

from assistant.datafile import read_yaml

from assistant.launch import codes
from assistant.validator import ValidationReport, check_world, validate
from assistant.validator.coerce import load_yaml, translate_value
from assistant.validator.report import Finding, OtherMesh


def is_generate_without_mesh(recipe: Any) -> bool:
    return (isinstance(recipe, Mapping) and "distributed" in recipe and recipe["distributed"] is None
            and "recipe" not in recipe and isinstance(recipe.get("inference"), Mapping))


MESH_OPTIONAL: dict[str, str] = read_yaml(Path(__file__).resolve().parent / "mesh_optional.yaml")


def mesh_optional(recipe: Any) -> str | None:
    """The recipe class name when it builds a mesh only from a distributed: section and has none, else None."""
    if not isinstance(recipe, Mapping) or "distributed" in recipe:
        return None
    name = _recipe_name(recipe)
    return name if name in MESH_OPTIONAL else None


NO_MESH: dict[str, dict[str, str]] = read_yaml(Path(__file__).resolve().parent / "no_mesh_recipes.yaml")


def _recipe_name(recipe: Mapping) -> str | None:
    target = recipe.get("recipe")
    if isinstance(target, Mapping):
        target = target.get("_target_")
    return target.rsplit(".", 1)[-1].strip() if isinstance(target, str) else None


def builds_no_mesh(recipe: Any) -> str | None:
    """The recipe class that never builds a device mesh, named by `recipe:` or (no `recipe:` and no
    `distributed:`) marked by its own section, else None."""
    if not isinstance(recipe, Mapping):
        return None
    name = _recipe_name(recipe)
    if name is not None:
        return name if name in NO_MESH else None
    if "distributed" in recipe:
        return None
    return next((n for n, row in NO_MESH.items() if isinstance(recipe.get(row["section"]), Mapping)), None)


def reads_fsdp_section(recipe: Any) -> str | None:
    """"fsdp" / "ddp" for a diffusion training recipe (recipes/diffusion/train.py reads those sections,
    never `distributed:`), else None."""
    if not isinstance(recipe, Mapping) or "distributed" in recipe or "recipe" in recipe:
        return None
    return next((k for k in ("fsdp", "ddp") if k in recipe), None)


def _is_kd(recipe: Mapping) -> bool:
    target = recipe.get("recipe")
    if isinstance(target, Mapping):
        target = target.get("_target_")
    return isinstance(target, str) and "KnowledgeDistillation" in target


def _size(section: Mapping, label: str, out: list[Finding]) -> int | None:
    def get(key: str, default: Any) -> Any:
        v = translate_value(section.get(key, default))
        return default if v is None and key != "dp_size" else v

    dp = get("dp_size", None)
    if dp is None:
        out.append(codes.finding("MW-E-KD-DP-SIZE", f"{label}.dp_size", label=label))
        return None
    sizes = [dp, get("tp_size", 1), get("pp_size", 1), get("cp_size", 1)]
    if not all(type(s) is int and s > 0 for s in sizes):
        return None  # the mesh's own check reports the bad size
    n = 1
    for s in sizes:
        n *= s
    return n


def _moved(f: Finding, label: str) -> Finding:
    path = label + f.path[len("distributed"):] if f.path.startswith("distributed") else f.path
    return replace(f, path=path, message=f"{label}: {f.message}", message_zh=f"{label}：{f.message_zh}")


def check_kd(recipe: Mapping, world: int, gpus_per_node: int,
             validate: Callable[..., ValidationReport]) -> ValidationReport | None:
    """The verdict of a KD recipe's meshes, or None when the recipe builds one ordinary mesh."""
    if not isinstance(recipe, Mapping) or not _is_kd(recipe):
        return None
    separate = bool(translate_value(recipe.get("separate_meshes", False)))
    teacher = recipe.get("teacher_distributed")
    errors: list[Finding] = []
    if not separate:
        if teacher is None:
            return None
        errors.append(codes.finding("MW-E-KD-TEACHER-SHARED", "teacher_distributed"))
        return ValidationReport(ok=False, errors=tuple(errors), world_size=world, gpus_per_node=gpus_per_node)
    if not isinstance(teacher, Mapping):
        errors.append(codes.finding("MW-E-KD-TEACHER-MISSING", "teacher_distributed"))
        return ValidationReport(ok=False, errors=tuple(errors), world_size=world, gpus_per_node=gpus_per_node)
    student = recipe.get("distributed") if isinstance(recipe.get("distributed"), Mapping) else {}
    s_size, t_size = _size(student, "distributed", errors), _size(teacher, "teacher_distributed", errors)
    if s_size is not None and t_size is not None and s_size + t_size != world:
        errors.append(codes.finding("MW-E-KD-MESH-SUM", "distributed.dp_size", student=s_size, teacher=t_size, world=world))
    if errors:
        return ValidationReport(ok=False, errors=tuple(errors), world_size=world, gpus_per_node=gpus_per_node)
    s_rep = validate(recipe, world_size=s_size, gpus_per_node=gpus_per_node, suggest_fix=False)
    t_rep = validate({"distributed": dict(teacher)}, world_size=t_size, gpus_per_node=gpus_per_node, suggest_fix=False)
    for label, section in (("distributed", student), ("teacher_distributed", teacher)):
        if str(translate_value(section.get("strategy", "fsdp2"))).lower() == "ddp":
            errors.append(codes.finding("MW-E-KD-DDP", f"{label}.strategy", label=label))
    if translate_value(recipe.get("offload_teacher_model", False)):  # kd.py setup, once the meshes are built
        errors.append(codes.finding("MW-E-KD-OFFLOAD-SEPARATE", "offload_teacher_model"))
    errors = [*s_rep.errors, *(_moved(f, "teacher_distributed") for f in t_rep.errors), *errors]
    warnings = [*s_rep.warnings, *(_moved(f, "teacher_distributed") for f in t_rep.warnings)]
    teacher_mesh = OtherMesh("teacher_distributed", (s_size, world - 1), t_rep.derived, shared=False)
    return ValidationReport(ok=not errors, errors=tuple(errors), warnings=tuple(warnings), derived=s_rep.derived,
                            memory=s_rep.memory, world_size=world, gpus_per_node=gpus_per_node, meshes=(teacher_mesh,))


def _not_read(code: str, path: str, world: int, gpus_per_node: int, **values: Any) -> ValidationReport:
    return ValidationReport(ok=True, warnings=(codes.finding(code, path, **values),), world_size=world,
                            gpus_per_node=gpus_per_node)


def validate_meshes(recipe: Any, *, world_size: int, gpus_per_node: int, **kwargs: Any) -> ValidationReport:
    """The verdict on the meshes this recipe's launch builds: one (the validator as it is), KD's student
    and teacher, or none (a generate config with distributed: null, a diffusion recipe's fsdp:/ddp:)."""
    if isinstance(recipe, (str, bytes, bytearray)):
        check_world(world_size, gpus_per_node)  # a bad world size is said before the text, as validate() does
        recipe = load_yaml(recipe)
    if is_generate_without_mesh(recipe):
        return _not_read("MW-W-LAUNCH-NO-MESH", "distributed", world_size, gpus_per_node)
    if name := mesh_optional(recipe):
        return _not_read("MW-W-LAUNCH-MESH-OPTIONAL", "distributed", world_size, gpus_per_node, recipe=name,
                         file=MESH_OPTIONAL[name])
    if name := builds_no_mesh(recipe):
        row = NO_MESH[name]
        # placed on what the recipe does read (its dist_env: section), else on its own section
        path = "dist_env" if "dist_env" in recipe else ("recipe" if "recipe" in recipe else row["section"])
        return _not_read("MW-W-LAUNCH-NO-MESH-RECIPE", path, world_size, gpus_per_node, recipe=name,
                         file=row["file"], script=row["script"])
    if section := reads_fsdp_section(recipe):
        return _not_read("MW-W-LAUNCH-NOT-DISTRIBUTED", section, world_size, gpus_per_node, section=section)
    kd = check_kd(recipe, world_size, gpus_per_node, lambda r, **kw: validate(r, **{**kwargs, **kw}))
    if kd is not None:
        return kd
    report = validate(recipe, world_size=world_size, gpus_per_node=gpus_per_node, **kwargs)
    if isinstance(recipe, Mapping) and _is_kd(recipe) and report.derived is not None:
        # one shared mesh: kd.py builds the teacher on the student's own DistributedSetup (the same sizes,
        # strategy and MoE config; with PP a copy of the student's pipeline config), so the teacher is on it too
        report = replace(report, meshes=(OtherMesh("teacher_model", (0, world_size - 1), report.derived, shared=True),))
    return report
