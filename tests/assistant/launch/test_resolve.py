"""One order for recipe, environment, overrides and world size (resolve.py)."""
from __future__ import annotations

import pytest

from assistant.launch import EnvVarUnset, parse_launch_line, parse_overrides
from assistant.launch.resolve import resolve

SKY = {"recipe": "TrainFinetuneRecipeForNextTokenPrediction", "distributed": {"tp_size": 2}, "skypilot": {"cloud": "gcp", "accelerators": "H100:8", "num_nodes": 2}}


def test_automodel_nproc_is_ignored_when_the_recipe_has_a_launcher_section():
    r = resolve(SKY, launch=parse_launch_line("automodel c.yaml --nproc-per-node 4"))
    assert r.world.world_size == 16 and "skypilot" in r.world.source
    assert [w.code for w in r.warnings] == ["MW-W-LAUNCH-NPROC-IGNORED"]  # said once, not again as a disagreement
    assert r.warnings[0].argument == "--nproc-per-node 4"


def test_explicit_world_wins_and_a_disagreeing_source_is_warned():
    from assistant.launch.counts import make

    r = resolve({"recipe": "X", "distributed": {}}, launch=parse_launch_line("automodel c.yaml --nproc-per-node 4"),
                explicit=make(None, 8, "--world-size 8 on the command line", "x", world_size=8))
    assert r.world.world_size == 8 and r.warnings[-1].code == "MW-W-LAUNCH-WORLD-DIFFERS"
    assert "--nproc-per-node 4" in r.warnings[-1].en


def test_order_ci_then_line_then_typed_and_environment_in_values():
    recipe = {"distributed": {"tp_size": 1}, "ci": {"nodes": 1, "ep_size": 2}}
    typed, _ = parse_overrides(["--distributed.ep_size", "${EP}"])
    r = resolve(recipe, launch=parse_launch_line("automodel c.yaml --distributed.ep_size 4"), overrides=typed,
                env={"EP": "8"}, ci=True)
    assert [o.index for o in r.overrides] == list(range(len(r.overrides)))
    assert r.recipe["distributed"]["ep_size"] == "8"  # resolved text; the loader translates it to 8
    assert r.world.world_size == 8 and "ci:" in r.world.source


def test_a_yaml_reference_fails_at_load_even_if_an_override_replaces_it():
    typed, _ = parse_overrides(["--model.name", "x"])
    with pytest.raises(EnvVarUnset):
        resolve({"model": {"name": "${NAME}"}}, overrides=typed, env={})


def test_app_lines_need_a_recipe_target():
    line = parse_launch_line("automodel c.yaml --nproc-per-node 2")
    assert [w.code for w in resolve({"distributed": {}}, launch=line).warnings] == ["MW-W-LAUNCH-NO-RECIPE"]
    assert resolve({"recipe": "TrainFinetuneRecipeForNextTokenPrediction", "distributed": {}}, launch=line).warnings == ()
    script = parse_launch_line("torchrun --nproc-per-node 2 recipes/llm/train_ft.py -c c.yaml")
    assert resolve({"distributed": {}}, launch=script).warnings == ()  # a recipe script needs no recipe: key
