"""Any input: a Launch or a LaunchError with both languages, never another exception."""
from __future__ import annotations

import random

from assistant.launch import LaunchError, apply_overrides, parse_launch_line, parse_overrides, parse_sbatch, resolve_env_vars
from assistant.launch.resolve import resolve

WORDS = ["automodel", "am", "torchrun", "python", "-m", "nemo_automodel.cli.app", "torch.distributed.run", "cfg.yaml",
         "recipes/llm/train_ft.py", "-c", "--config", "--nproc-per-node", "--nproc_per_node=4", "--nproc", "--nnodes",
         "2", "1:4", "gpu", "--distributed.pp_size", "--a=b", "---x", "-x", "'", '"', "\\", "$X", "${Y:-3}", "=", "--",
         "{'a': [1", "uv", "run", "FOO=1", "&&", "bash", "#SBATCH", "-N", "\n", "#", "--gres=gpu:4", "CONFIG=c.yaml",
         "${", "%s", "\x00", "中文", "-1", "1e400", "[" * 50,
         # command substitutions, held as one word by shell.words, and the srun bash -c wrapper sbatch reads into
         "$(", ")", "$(nvidia-smi -L | wc -l)", "`", "srun bash -c \"", "--virtual-local-rank", "--nnode"]


def _ok_or_clear(fn, *args):
    try:
        return fn(*args)
    except LaunchError as exc:
        assert exc.message and exc.message_zh
        return None


def test_random_lines_scripts_and_argv():
    rng = random.Random(19)
    for _ in range(1500):
        toks = [rng.choice(WORDS) for _ in range(rng.randint(0, 12))]
        line = " ".join(toks)
        launch = _ok_or_clear(parse_launch_line, line)
        _ok_or_clear(parse_sbatch, "\n".join(toks))
        got = _ok_or_clear(parse_overrides, toks)
        if got is not None:
            recipe = apply_overrides({"distributed": {"tp_size": 1}}, got[0])
            _ok_or_clear(resolve_env_vars, recipe, {"X": "1"})
        if launch is not None:
            _ok_or_clear(lambda: resolve({"distributed": {}, "ci": {"nodes": rng.choice([1, "x", 0])}}, launch=launch,
                                         ci=rng.random() < 0.5))
