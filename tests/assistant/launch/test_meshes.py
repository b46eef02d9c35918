"""KD separate meshes (recipes/kd_utils.py) and generate configs with distributed: null (generate.py)."""
from __future__ import annotations

from assistant.launch.meshes import check_kd, is_generate_without_mesh
from assistant.validator import validate

KD = {"recipe": "KnowledgeDistillationRecipeForNextTokenPrediction", "separate_meshes": True,
      "step_scheduler": {"global_batch_size": 32, "local_batch_size": 2},
      "distributed": {"strategy": "fsdp2", "dp_size": 2, "tp_size": 1, "cp_size": 1, "pp_size": 1},
      "teacher_distributed": {"strategy": "fsdp2", "dp_size": 1, "pp_size": 2, "pipeline": {"pp_schedule": "1f1b"}}}


def test_student_plus_teacher_is_the_world_each_checked_at_its_size():
    r = check_kd(KD, 4, 8, validate)
    assert r.ok and r.world_size == 4 and r.derived.world_size == 2
    r = check_kd(KD, 8, 8, validate)
    assert not r.ok and r.codes == ["MW-E-KD-MESH-SUM"] and "2 + 2 != world_size 8" in r.errors[0].message


def test_each_mesh_needs_dp_size_and_teacher_errors_name_the_teacher():
    bad = {**KD, "teacher_distributed": {"strategy": "fsdp2", "pp_size": 2, "pipeline": {}}}
    assert check_kd(bad, 4, 8, validate).codes == ["MW-E-KD-DP-SIZE"]
    bad = {**KD, "teacher_distributed": {"strategy": "fsdp2", "dp_size": 1, "pp_size": 2}}
    r = check_kd(bad, 4, 8, validate)
    assert "MW-E-PP-NO-PIPELINE" in r.codes and r.errors[0].path.startswith("teacher_distributed")


def test_shared_mesh_and_missing_teacher():
    shared = {k: v for k, v in KD.items() if k != "separate_meshes"}
    assert check_kd(shared, 4, 8, validate).codes == ["MW-E-KD-TEACHER-SHARED"]
    alone = {k: v for k, v in KD.items() if k != "teacher_distributed"}
    assert check_kd(alone, 4, 8, validate).codes == ["MW-E-KD-TEACHER-MISSING"]
    assert check_kd({k: v for k, v in shared.items() if k != "teacher_distributed"}, 4, 8, validate) is None
    assert check_kd({"distributed": {}}, 4, 8, validate) is None


def test_generate_with_null_distributed():
    assert is_generate_without_mesh({"model": {}, "inference": {}, "distributed": None})
    assert not is_generate_without_mesh({"recipe": "X", "inference": {}, "distributed": None})
    assert not is_generate_without_mesh({"inference": {}, "distributed": {"backend": "nccl"}})


def test_a_speculative_recipe_with_no_distributed_section_builds_no_mesh():
    # train_eagle3.py / train_dflash.py: `if self.cfg.get("distributed", None) is not None:` builds the
    # mesh, else the draft runs under DDP over every rank; train_ft reads cfg.distributed and fails
    from assistant.launch.meshes import validate_meshes

    eagle = {"recipe": "TrainEagle3Recipe", "dist_env": {"backend": "nccl"}, "recipe_args": {"ttt_steps": 7}}
    r = validate_meshes(eagle, world_size=8, gpus_per_node=8)
    assert r.ok and r.codes == ["MW-W-LAUNCH-MESH-OPTIONAL"] and r.warnings[0].message_zh
    assert validate_meshes({**eagle, "recipe": "TrainDominoRecipe"}, world_size=8, gpus_per_node=8).ok
    with_section = {**eagle, "distributed": {"tp_size": 3}}
    assert "MW-E-WORLD-DIVISIBLE" in validate_meshes(with_section, world_size=8, gpus_per_node=8).codes
    ft = {**eagle, "recipe": "TrainFinetuneRecipeForNextTokenPrediction"}
    assert validate_meshes(ft, world_size=8, gpus_per_node=8).codes == ["MW-E-DIST-NOT-MAPPING"]


def test_the_report_says_which_mesh_the_teacher_runs_on():
    # separate meshes: the teacher's own mesh on the ranks after the student's (kd_utils.py
    # create_kd_distributed_setups: teacher_ranks = range(student_size, world_size))
    r = check_kd(KD, 4, 8, validate)
    (teacher,) = r.meshes
    assert (teacher.label, teacher.ranks, teacher.shared) == ("teacher_distributed", (2, 3), False)
    assert teacher.derived.pp_size == 2 and teacher.derived.world_size == 2
    # one shared mesh: upstream builds the teacher on the student's own DistributedSetup (kd.py setup)
    from assistant.launch.meshes import validate_meshes

    shared = {k: v for k, v in KD.items() if k not in ("separate_meshes", "teacher_distributed")}
    r = validate_meshes(shared, world_size=2, gpus_per_node=8)
    assert r.ok and r.derived.dp_size == 2
    (teacher,) = r.meshes
    assert (teacher.label, teacher.ranks, teacher.shared) == ("teacher_model", (0, 1), True)
    assert teacher.derived == r.derived
    # a recipe that is no KD has no other mesh
    assert validate_meshes({"distributed": {"tp_size": 2}}, world_size=8, gpus_per_node=8).meshes == ()


def test_the_text_and_json_reports_show_the_teacher_mesh(tmp_path, capsys):
    import json

    import yaml

    from assistant.cli import main

    p = tmp_path / "kd.yaml"
    p.write_text(yaml.safe_dump(KD), encoding="utf-8")
    assert main(["validate", str(p), "--world-size", "4"]) == 0
    out = capsys.readouterr().out
    assert "teacher_distributed (ranks 2-3): fsdp2: dp 1" in out and "pp 2" in out
    assert main(["validate", str(p), "--world-size", "4", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [(m["label"], m["ranks"], m["shared"]) for m in d["meshes"]] == [("teacher_distributed", [2, 3], False)]


def test_separate_meshes_refuse_an_offloaded_teacher():
    # recipes/llm/kd.py setup: `if self.separate_meshes: if self._offload_teacher_model: raise ValueError(...)`
    assert check_kd({**KD, "offload_teacher_model": True}, 4, 8, validate).codes == ["MW-E-KD-OFFLOAD-SEPARATE"]
    assert check_kd({**KD, "offload_teacher_model": "false"}, 4, 8, validate).ok  # translated as upstream does
    shared = {k: v for k, v in KD.items() if k not in ("separate_meshes", "teacher_distributed")}
    assert check_kd({**shared, "offload_teacher_model": True}, 2, 8, validate) is None  # one mesh: offload is fine


MINING = {"dist_env": {"backend": "nccl", "timeout_minutes": 30}, "mining": {"mining_batch_size": 128}}


def test_hard_negative_mining_builds_no_mesh_at_any_world():
    """mine_hard_negatives.py's config (no recipe:, no distributed:) reads only dist_env: upstream never
    parses a distributed section there, so the old MW-E-DIST-NOT-MAPPING was a false error."""
    from assistant.launch.meshes import validate_meshes

    for world in (1, 3, 8, 64):
        r = validate_meshes(MINING, world_size=world, gpus_per_node=8)
        assert r.ok and r.codes == ["MW-W-LAUNCH-NO-MESH-RECIPE"] and r.warnings[0].path == "dist_env", world
    named = {"recipe": "nemo_automodel.recipes.retrieval.MineHardNegativesRecipe", "distributed": {"tp_size": 3}}
    assert validate_meshes(named, world_size=8, gpus_per_node=8).codes == ["MW-W-LAUNCH-NO-MESH-RECIPE"]
    # a mining: section beside a distributed: one, or under another recipe, is that recipe's to judge
    assert not validate_meshes({**MINING, "distributed": {"tp_size": 3}}, world_size=8, gpus_per_node=8).ok
    other = {**MINING, "recipe": "TrainFinetuneRecipeForNextTokenPrediction"}
    assert validate_meshes(other, world_size=8, gpus_per_node=8).codes == ["MW-E-DIST-NOT-MAPPING"]
