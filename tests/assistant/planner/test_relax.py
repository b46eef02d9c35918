"""The planner's fallback drops the fewest requests and names them (issue 18)."""
from assistant.planner.recommend import plan
from assistant.planner.relax import Request, fewest_dropped
from assistant.understand.understand import understand


def test_large_moe_keeps_pp_and_ep_when_only_tp_is_refused():
    p = plan(understand("Qwen3-235B-A22B on 16 nodes x 8 H100, suggest tp, pp and ep"))
    d = p.distributed
    assert d.get("tp_size", 1) == 1 and d["pp_size"] > 1 and d["ep_size"] > 1
    assert p.report.ok and not p.feasible
    reason = p.infeasible_reason.en
    assert "MW-E-TP-MOE-PLAN" in reason
    assert "drops only tensor parallelism" in reason and "keeps" in reason


def test_one_request_dropped_before_two():
    from assistant.planner.recommend import Targets

    t = Targets(ranges={}, prefer={}, fixed={"tp": 4}, required={"tp", "pp"})
    seen = []

    def search(tt):
        seen.append((dict(tt.fixed), set(tt.required)))
        return None if "pp" in tt.required else type("F", (), {"score": 1.0})()

    got = fewest_dropped(t, search, rules_want=set())
    assert got is not None and got.requests == (Request("pp", None),)
    assert len(seen) == 2  # each single drop tried, no pair needed


def test_a_dim_the_rules_want_stays_wanted_when_its_request_is_dropped():
    from assistant.planner.recommend import Targets

    t = Targets(ranges={}, prefer={}, required={"ep"})
    got = fewest_dropped(t, lambda tt: type("F", (), {"score": 0.0})() if "ep" in tt.automatic else None,
                         rules_want={"ep"})
    assert got is not None and "ep" in got.targets.required
