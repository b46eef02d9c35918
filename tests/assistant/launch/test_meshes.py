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
