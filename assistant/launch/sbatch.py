"""An sbatch script read as Slurm and the shell run it (the repo's slurm.sub, docs/launcher/slurm.mdx).

`#SBATCH` directives before the first command set the allocation (`-N` / `--nodes`, `--gpus-per-node`,
`--gres=gpu:[type:]N`); Slurm exports `SLURM_NNODES` and, for `--gpus-per-node` only,
`SLURM_GPUS_PER_NODE`. The script's `NAME=value` lines (`CONFIG=...`) are expanded where the launch
command uses them, including inside `srun ... bash -c "..."`, and the command is then read as a launch
line: `torchrun --nproc_per_node=${SLURM_GPUS_PER_NODE:-8} --nnodes=${SLURM_NNODES:-1} -m
nemo_automodel.cli.app ${CONFIG} --overrides...`.
"""
from __future__ import annotations

import os
import re
import shlex
from dataclasses import replace

from assistant.launch.launch_line import APP_MODULE, APP_PROGRAMS, parse_launch_line
from assistant.launch.shell import MAX_LINE, expand
from assistant.launch.types import Launch, LaunchError
from assistant.launch.counts import count, gpus_in, make

MAX_SCRIPT = 256 * 1024
_ASSIGN = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_LAUNCHERS = ("torchrun", *APP_PROGRAMS)


def _directives(lines: list[str]) -> dict[str, str]:
    got: dict[str, str] = {}
    for raw in lines:
        s = raw.strip()
        if not s:
            continue
        if not s.startswith("#"):
            break  # sbatch reads #SBATCH lines only until the first command
        if not s.startswith("#SBATCH"):
            continue
        try:
            toks = shlex.split(s[len("#SBATCH"):], comments=True)
        except ValueError:
            continue
        k = 0
        while k < len(toks):
            t = toks[k]
            name, eq, val = t.partition("=")
            if t.startswith("-N") and len(t) > 2:
                name, val, eq = "-N", t[2:], "="
            if not eq and k + 1 < len(toks) and not toks[k + 1].startswith("-"):
                val = toks[k + 1]
                k += 1
            key = {"-N": "nodes", "--nodes": "nodes", "--gpus-per-node": "gpus", "--gres": "gres",
                   "--ntasks-per-node": "ntasks"}.get(name)
            if key:
                got[key] = val
            k += 1
    return got


def _gres_gpus(gres: str) -> str | None:
    for part in gres.split(","):
        bits = part.strip().split(":")
        if bits[0] == "gpu" and len(bits) >= 2:
            return bits[-1]
    return None


def _logical_lines(text: str) -> list[str]:
    return re.sub(r"\\\r?\n", " ", text).splitlines()


def _command(words: list[str]) -> list[str] | None:
    """The launch command inside a line's words, itself as words (recursing into `bash -c "..."`)."""
    for j, w in enumerate(words):
        base = os.path.basename(w)
        if base in _LAUNCHERS or (base in ("python", "python3") and APP_MODULE in words[j:]):
            cmd = words[j:]
            while cmd and cmd[-1] in ("&", ";", "&&", "||"):
                cmd = cmd[:-1]
            return cmd
        if " " in w and any(x in w for x in _LAUNCHERS):
            try:
                inner = shlex.split(w, comments=False)
            except ValueError:
                continue
            for part in " ".join(inner).split("&&"):
                try:
                    got = _command(shlex.split(part))
                except ValueError:  # the inner text re-joined no longer splits: not a command to read
                    continue
                if got:
                    return got
    return None


def parse_sbatch(text: str) -> Launch:
    if not isinstance(text, str):
        raise LaunchError("the sbatch script must be text", "sbatch 脚本必须是文本")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_SCRIPT:
        raise LaunchError(f"the sbatch script is larger than {MAX_SCRIPT} bytes", f"sbatch 脚本超过 {MAX_SCRIPT} 字节")
    d = _directives(text.splitlines())
    env: dict[str, str] = {}
    nodes = count(d["nodes"], "#SBATCH -N", "#SBATCH -N") if "nodes" in d else 1
    env["SLURM_NNODES"] = env["SLURM_JOB_NUM_NODES"] = str(nodes)
    gpus = None
    if "gpus" in d:
        env["SLURM_GPUS_PER_NODE"] = d["gpus"]
        gpus = count(gpus_in(d["gpus"]), "#SBATCH --gpus-per-node", "#SBATCH --gpus-per-node")
    elif "gres" in d and _gres_gpus(d["gres"]):
        gpus = count(_gres_gpus(d["gres"]), "#SBATCH --gres", "#SBATCH --gres")
    said = [f"-N {d['nodes']}" if "nodes" in d else "no -N (1 node)"]
    if "gpus" in d:
        said.append(f"--gpus-per-node={d['gpus']}")
    elif "gres" in d:
        said.append(f"--gres={d['gres']}")
    sbatch_said = "#SBATCH " + ", ".join(said)
    command = None
    for line in _logical_lines(text):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = _ASSIGN.match(s)
        if m and "$(" not in m.group(2):
            try:
                val = shlex.split(m.group(2), comments=True)
            except ValueError:
                val = []
            env[m.group(1)] = expand(val[0], env) if val else ""
            continue
        try:
            words = shlex.split(s, comments=True)
        except ValueError:
            continue
        got = _command(words)
        if got:
            command = " ".join(shlex.quote(expand(w, env)) for w in got)
            break
    if command is None:
        world = make(nodes, gpus, f"{sbatch_said} in the sbatch script", f"sbatch 脚本中的 {sbatch_said}") if gpus else None
        return Launch(config_path=env.get("CONFIG"), overrides=(), world=world, warnings=(), form="sbatch")
    if len(command) > MAX_LINE:
        raise LaunchError("the sbatch script's launch command is too long", "sbatch 脚本中的启动命令过长")
    launch = parse_launch_line(command)
    world = launch.world
    if world is not None:
        world = replace(world, source=f"{world.source} ({sbatch_said} in the sbatch script)",
                        source_zh=f"{world.source_zh}（sbatch 脚本中的 {sbatch_said}）")
    elif gpus:
        world = make(nodes, gpus, f"{sbatch_said} in the sbatch script", f"sbatch 脚本中的 {sbatch_said}")
    return replace(launch, world=world)  # form stays the command's own (automodel, torchrun-module, ...)
