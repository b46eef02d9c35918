"""Rank oracle: NeMo AutoModel's own mesh code on a fake process group, once per rank (test support only).

Run as a script in a subprocess, with the upstream checkout importable and torch installed:
    python upstream_ranks_oracle.py < cases.jsonl > ranks.jsonl
Each input line: {"strategy": "fsdp2"|"megatron_fsdp", "world_size": N, "tp": .., "pp": .., "cp": .., "ep": ..,
"dp_replicate": ..}. Each output line: {"ranks": [{"coord": [...], "groups": {axis: [ranks]},
"moe_coord": [...]|null, "moe_groups": {"ep": [...], "ep_shard": [...]}|null}, ...]}, one entry per global
rank, read from the meshes that rank itself builds.
"""
from __future__ import annotations

import json
import logging
import sys

FSDP2_AXES = ("pp", "dp_replicate", "dp_shard", "cp", "tp", "dp", "dp_shard_cp", "dp_cp")
MEGATRON_AXES = ("dp", "cp", "tp")


def main() -> None:
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    from nemo_automodel.components.distributed import mesh_utils as mu
    from nemo_automodel.components.distributed.mesh import ParallelismSizes

    logging.disable(logging.CRITICAL)
    out = sys.stdout
    sys.stdout = sys.stderr
    for line in sys.stdin:
        case = json.loads(line)
        world = case["world_size"]
        sizes = ParallelismSizes(tp_size=case.get("tp", 1), pp_size=case.get("pp", 1), cp_size=case.get("cp", 1),
                                 ep_size=case.get("ep", 1), dp_replicate_size=case.get("dp_replicate"))
        ranks = []
        for rank in range(world):
            dist.init_process_group("fake", store=FakeStore(), rank=rank, world_size=world)
            if case["strategy"] == "fsdp2":
                mesh, moe = mu._create_fsdp2_device_mesh(sizes, world_size=world)
                axes = FSDP2_AXES
            else:
                mesh, moe = mu._create_megatron_fsdp_device_mesh(sizes, world_size=world), None
                axes = MEGATRON_AXES + (("dp_cp",) if case.get("cp", 1) > 1 else ())
            row = {"coord": list(mesh.get_coordinate()),
                   "groups": {a: mu.get_flat_mesh(mesh, a).mesh.reshape(-1).tolist() for a in axes},
                   "moe_coord": None, "moe_groups": None}
            if moe is not None:
                row["moe_coord"] = list(moe.get_coordinate())
                row["moe_groups"] = {a: moe[a].mesh.reshape(-1).tolist() for a in ("ep_shard", "ep")}
            ranks.append(row)
            dist.destroy_process_group()
        out.write(json.dumps({"ranks": ranks}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
