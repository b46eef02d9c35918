"""sbatch scripts read as Slurm and the shell run them (slurm.sub, docs/launcher/slurm.mdx)."""
from __future__ import annotations

import pytest

from assistant.launch import LaunchError, parse_sbatch

SUB = """#!/bin/bash
#SBATCH -A acct
#SBATCH -N 2                        # number of nodes
#SBATCH --gpus-per-node=4
#SBATCH --ntasks-per-node=1
CONFIG=examples/llm_finetune/x.yaml
export MASTER_PORT=${MASTER_PORT:-13742}
srun --container-image=img bash -c "\\
    cd /opt/Automodel && \\
    torchrun \\
        --nproc_per_node=\\${SLURM_GPUS_PER_NODE:-8} \\
        --nnodes=\\${SLURM_NNODES:-1} \\
        -m nemo_automodel.cli.app ${CONFIG} --distributed.tp_size 2 --step_scheduler.local_batch_size=4" &
"""


def test_reference_shape():
    l = parse_sbatch(SUB)
    assert l.config_path == "examples/llm_finetune/x.yaml" and l.form == "torchrun-module"
    assert (l.world.world_size, l.world.nodes, l.world.gpus_per_node) == (8, 2, 4)
    assert "#SBATCH -N 2" in l.world.source and "--gpus-per-node=4" in l.world.source
    assert [(o.path, o.value) for o in l.overrides] == [("distributed.tp_size", 2), ("step_scheduler.local_batch_size", 4)]


def test_gres_does_not_set_slurm_gpus_per_node_so_the_default_applies():
    l = parse_sbatch(SUB.replace("--gpus-per-node=4", "--gres=gpu:h100:4"))
    assert l.world.world_size == 16  # ${SLURM_GPUS_PER_NODE:-8}: Slurm exports it for --gpus-per-node only


def test_directives_after_the_first_command_are_ignored():
    text = "#!/bin/bash\necho hi\n#SBATCH -N 4\nautomodel c.yaml --nproc-per-node 8\n"
    assert parse_sbatch(text).world.world_size == 8


def test_no_launch_command_uses_the_allocation():
    l = parse_sbatch("#SBATCH --nodes=3\n#SBATCH --gpus-per-node=h100:8\nCONFIG=c.yaml\n")
    assert (l.world.world_size, l.config_path) == (24, "c.yaml")


@pytest.mark.parametrize("gres, gpus", [("gpu:4", 4), ("gpu:h100:4", 4), ("nic:1,gpu:a100:2", 2)])
def test_gres_gives_the_gpus_per_node_when_no_command_says_them(gres, gpus):
    l = parse_sbatch(f"#SBATCH -N2\n#SBATCH --gres={gres}\nCONFIG=c.yaml\n")
    assert (l.world.world_size, l.world.nodes, l.world.gpus_per_node) == (2 * gpus, 2, gpus)
    assert f"--gres={gres}" in l.world.source
    assert parse_sbatch("#SBATCH -N 2\n#SBATCH --gres=nic:1\nCONFIG=c.yaml\n").world is None  # no GPU count said


def test_bad_input():
    with pytest.raises(LaunchError):
        parse_sbatch("#SBATCH -N two\n")
    with pytest.raises(LaunchError):
        parse_sbatch("x" * (256 * 1024 + 1))


def test_a_wrapped_command_that_no_longer_splits_is_not_a_crash():
    # srun ... bash -c "torchrun '\"'": the inner words re-joined hold a lone quote
    l = parse_sbatch("#SBATCH -N 1\n#SBATCH --gpus-per-node=2\nsrun bash -c \"torchrun '\\\"'\"\n")
    assert l.world.world_size == 2 and l.form == "sbatch"
