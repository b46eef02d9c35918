"""Which strategy accepts which parallel feature, read once from the validator's schema.

Features: tp, pp, cp, ep (a size > 1), hsdp (dp_replicate_size > 1), sp (sequence_parallel) and
ac_selective (activation_checkpointing: selective). The size refusals come from `size_refusals` in
upstream_schema.yaml; sp follows from the strategy dataclass's fields, ac_selective from
`ac_selective_strategies`. The planner, the memory estimate and the Layout's checks all ask here.
"""
from __future__ import annotations

from dataclasses import dataclass

from assistant.validator.schema import AC_SELECTIVE_STRATEGIES, CANONICAL, SIZE_REFUSALS, STRATEGIES, STRATEGY_FIELDS

SIZE_FEATURES: dict[str, str] = {"tp": "tp_size", "pp": "pp_size", "cp": "cp_size", "ep": "ep_size",
                                 "hsdp": "dp_replicate_size"}
FEATURES: tuple[str, ...] = (*SIZE_FEATURES, "sp", "ac_selective")
STRATEGY_NAMES: tuple[str, ...] = tuple(CANONICAL.values())  # canonical spellings, fsdp2 first


@dataclass(frozen=True)
class Capabilities:
    strategy: str  # canonical name
    dataclass_name: str
    refusals: dict[str, str]  # feature -> the rule code that rejects it, in upstream's check order

    @property
    def accepts(self) -> frozenset[str]:
        return frozenset(f for f in FEATURES if f not in self.refusals)

    def refuses(self, feature: str) -> str | None:
        return self.refusals.get(feature)


def _build() -> dict[str, Capabilities]:
    out: dict[str, Capabilities] = {}
    for dc, name in CANONICAL.items():
        refusals = {f: codes[dc] for f, codes in SIZE_REFUSALS.items() if dc in codes}
        if "sequence_parallel" not in STRATEGY_FIELDS[dc]:
            refusals["sp"] = "MW-E-STRATEGY-OPTION"
        if name not in AC_SELECTIVE_STRATEGIES:
            refusals["ac_selective"] = "MW-E-AC-SELECTIVE"
        out[name] = Capabilities(name, dc, refusals)
    return out


_TABLE = _build()


def capabilities(strategy: str) -> Capabilities:
    """By canonical name or any spelling upstream accepts (megatron-fsdp, mfsdp, FSDP2); KeyError otherwise."""
    if strategy in _TABLE:
        return _TABLE[strategy]
    return _TABLE[CANONICAL[STRATEGIES[strategy.lower()]]]


def accepts(strategy: str, feature: str) -> bool:
    return capabilities(strategy).refuses(feature) is None
