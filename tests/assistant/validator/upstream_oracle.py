"""Differential oracle: runs NeMo AutoModel's own start-up code on configs (test support only).

Run as a script in a subprocess, with the upstream checkout importable and torch installed:
    python upstream_oracle.py < cases.jsonl > verdicts.jsonl
Each input line: {"yaml": "...", "world_size": N}. Each output line: {"ok": bool, "error": str|null,
"mesh": [...]|null, "moe_mesh": [...]|null, "dp": int|null}. A fake process group stands in for
the GPUs; rank 0 builds the meshes, and a mesh that does not cover the world exactly counts as a
failure (the ranks outside it fail on first use).
"""
from __future__ import annotations

import json
import logging
import sys


def _recipe_checks(cfg, setup, world: int):
    """The recipe-level start-up checks: schedule name, pipeline microbatches, step scheduler."""
    from torch.distributed.pipelining.schedules import get_schedule_class

    from nemo_automodel.components.distributed.mesh_utils import get_flat_mesh
    from nemo_automodel.recipes._typed_config import _STEP_SCHEDULER_RUNTIME_KEYS, _section_kwargs

    mc = setup.mesh_context
    if mc.pp_enabled:
        get_schedule_class(setup.pipeline_config.pp_schedule)
    node = cfg.get("step_scheduler", None)
    if node is None:
        return None
    lbs = cfg.get("step_scheduler.local_batch_size", 1)
    if mc.pp_enabled:
        mbs = cfg.get("distributed.pipeline.pp_microbatch_size", 1)
        assert lbs // mbs >= mc.pp_size
        if lbs % mbs != 0:
            raise ValueError("local_batch_size must be divisible by microbatch_size")
    kwargs = {k: v for k, v in _section_kwargs(node).items() if k not in _STEP_SCHEDULER_RUNTIME_KEYS}
    gbs = kwargs.get("global_batch_size", 32)
    dp = world if not mc.device_mesh else get_flat_mesh(mc.device_mesh, "dp").size()
    # StepScheduler.__init__'s batch checks, in its order
    if gbs <= 0 or lbs <= 0 or dp <= 0:
        raise ValueError("batch sizes must be > 0")
    if gbs % (lbs * dp) != 0:
        raise ValueError("global_batch_size must be divisible by local_batch_size * dp_size")
    return gbs // (lbs * dp)


def main() -> None:
    import torch.distributed as dist
    import yaml
    from torch.testing._internal.distributed.fake_pg import FakeStore

    from nemo_automodel.components.config.loader import ConfigNode
    from nemo_automodel.recipes._dist_utils import create_distributed_setup_from_config

    logging.disable(logging.CRITICAL)
    results = sys.stdout
    sys.stdout = sys.stderr  # upstream prints; keep the result stream clean
    current = None
    for line in sys.stdin:
        case = json.loads(line)
        world = case["world_size"]
        if current != world:
            if dist.is_initialized():
                dist.destroy_process_group()
            dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
            current = world
        out = {"ok": False, "error": None, "mesh": None, "moe_mesh": None, "dp": None}
        try:
            raw = yaml.safe_load(case["yaml"])
            cfg = ConfigNode(raw)
            setup = create_distributed_setup_from_config(cfg, world_size=world)
            mc = setup.mesh_context
            mesh = mc.device_mesh
            if mesh is not None:
                shape = list(mesh.mesh.shape)
                n = 1
                for s in shape:
                    n *= s
                if n != world:
                    raise RuntimeError(f"mesh covers {n} of {world} ranks")
                out["mesh"] = shape
            if mc.moe_mesh is not None:
                out["moe_mesh"] = list(mc.moe_mesh.mesh.shape)
            out["dp"] = mc.dp_size
            if case.get("recipe_checks"):
                out["grad_acc"] = _recipe_checks(cfg, setup, world)
            out["ok"] = True
        except BaseException as exc:  # noqa: BLE001 - any failure is a rejection
            if isinstance(exc, KeyboardInterrupt):
                raise
            out["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        results.write(json.dumps(out) + "\n")
        results.flush()


if __name__ == "__main__":
    main()
