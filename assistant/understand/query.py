"""What the understanding step extracts from a question (and its conversation)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

Intent = Literal[
    "strategy",  # which strategy / how to lay out parallelism for a scenario
    "yaml",  # "write me the YAML"
    "sizing",  # arithmetic: dp_size, mesh shape, grad accumulation, memory
    "diagnose",  # a pasted YAML: what is wrong with it
    "limitations",  # what a strategy cannot do (megatron_fsdp, ddp)
    "howto",  # how a parallelism / feature works and what it needs (TP/PP/CP/EP/HSDP/SP/packing/AC/mixed precision)
    "code_location",  # where is X implemented
    "python_api",  # configuring from Python instead of YAML
    "out_of_scope",  # launchers, Slurm, SkyPilot, checkpointing, model onboarding
    "nonsense",  # empty, random, unrelated
]

Feature = Literal["tp", "pp", "cp", "ep", "hsdp", "sp", "ac", "packing", "mixed_precision", "grad_sync"]


@dataclass(frozen=True)
class Params:
    model: str | None = None  # key of kb/models.yaml when recognised, e.g. "llama-3.1-70b"
    model_size_b: float | None = None  # total parameters, billions ("70B" -> 70.0)
    active_size_b: float | None = None  # MoE active parameters ("30B-A3B" -> 3.0)
    is_moe: bool | None = None
    num_experts: int | None = None
    nodes: int | None = None
    gpus_per_node: int | None = None
    world_size: int | None = None  # total GPUs when stated or computable
    gpu: str | None = None  # key of kb/gpus.yaml, e.g. "h100-80gb"
    seq_len: int | None = None
    wanted: frozenset[str] = frozenset()  # Feature values the user asked for
    unwanted: frozenset[str] = frozenset()  # features the user excluded ("no PP")
    strategy: str | None = None  # strategy named by the user (fsdp2, megatron_fsdp, ddp)
    yaml_text: str | None = None  # YAML pasted in the question
    # Sizes and batch sizes the user fixed ("tp_size 8", "global batch 512"); the planner keeps them.
    tp_size: int | None = None
    pp_size: int | None = None
    cp_size: int | None = None
    ep_size: int | None = None
    dp_replicate_size: int | None = None
    dp_size: int | None = None  # data-parallel size the user states ("at least 2 data-parallel replicas")
    pp_microbatch_size: int | None = None  # pipeline micro-batch the user states ("pp_microbatch_size 4")
    global_batch_size: int | None = None
    local_batch_size: int | None = None
    gpu_memory_gb: int | None = None  # stated ("80G") or the type's usual memory, even when `gpu` is not in the table
    # A change asked about ("go from 1 node to 4", "double the GPUs"): nodes/world above are the target,
    # this is the world it replaces (None when no change is asked or the old world is unknown).
    prior_world_size: int | None = None

    def merged_over(self, earlier: "Params") -> "Params":
        """Follow-ups: values stated now win, the rest carries over from earlier turns."""
        vals = {}
        for name in self.__dataclass_fields__:
            now, before = getattr(self, name), getattr(earlier, name)
            if isinstance(now, frozenset):
                vals[name] = now or before
            else:
                vals[name] = now if now is not None else before
        return Params(**vals)


# The features a question can ask for or about (Params.wanted, Query.topics), in the order answers list them.
FEATURES: tuple[str, ...] = ("tp", "pp", "cp", "ep", "sp", "hsdp", "ac", "packing", "mixed_precision", "grad_sync")

# `unknown`: a clause that asks something no kind was read for with confidence (kept, answered plainly)
AskKind = Literal["verdict", "quantity", "fact", "location", "recommendation", "config", "diagnosis",
                  "out_of_scope", "nonsense", "unknown"]
ASK_KINDS: tuple[str, ...] = ("verdict", "quantity", "fact", "location", "recommendation", "config", "diagnosis",
                              "out_of_scope", "nonsense", "unknown")


@dataclass(frozen=True)
class Ask:
    """One thing the question asks, answered in the order asked."""
    kind: AskKind
    text: str  # the clause that asks it
    # quantity: dp_size | dp_shard | ep_shard | mesh_shape | moe_mesh_shape | grad_acc_steps | microbatches |
    # memory | world_size; fact / location: the identifier or quoted error text asked about
    target: str | None = None
    # what about it is asked: "advice" for "good idea?" (a verdict that weighs warnings, not only errors)
    aspect: str | None = None
    # quantity: the other sizes the asking clause puts instead of the user's ("if I drop to tp_size 2, what
    # are dp and grad-acc then?": "tp_size=2"), as `instead_sizes` writes them; None asks about the layout as given
    layout: str | None = None
    # quantity with no target of its own clause: the quantity of the field the clause before named ("dp_size
    # 我写的 none，实际会是多少"), taken when the target reader reads none for the clause itself (understand/)
    borrowed: str | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Pasted:
    """What was pasted into the question, sorted: configs (YAML text), error output, and the prose."""
    configs: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    prose: str = ""


SIZE_KEYS: tuple[str, ...] = ("tp_size", "pp_size", "cp_size", "ep_size", "dp_size", "dp_replicate_size")


@dataclass(frozen=True)
class Stated:
    """The layout the user fixed in prose: a size stated is a constraint, 1 included ("no PP" is pp_size 1)."""
    strategy: str | None = None
    sizes: Mapping[str, int] = field(default_factory=dict)  # only the stated keys of SIZE_KEYS
    rest_data_parallel: bool = False  # "the rest data parallel": dp_size is inferred, not a free size to choose
    options: Mapping[str, Any] = field(default_factory=dict)  # other distributed keys set in prose
    # Features asked about or for without a size ("can megatron_fsdp do PP?"): a capability, not a layout.
    wanted: frozenset[str] = frozenset()
    # command-line overrides written in the prose ("I pass `--distributed.pp_size 1`"): (dotted path,
    # value as upstream translates it), set over a pasted config in order
    overrides: tuple[tuple[str, Any], ...] = ()
    # recipe settings outside `distributed:` stated in prose (prose_settings.py: "we pack sequences to 8k",
    # "attention 用的默认 sdpa"), dotted from the recipe root; set only where a pasted config leaves them
    settings: Mapping[str, Any] = field(default_factory=dict)

    def any(self) -> bool:
        return bool(self.strategy or self.sizes or self.options)


@dataclass(frozen=True)
class Situation:
    """The user's situation, read exactly, once: every later step reads this instead of re-resolving it."""
    world_size: int | None = None
    world_source: str | None = None  # "request" | "text" | "nodes*gpus" | None
    nodes: int | None = None
    gpus_per_node: int | None = None
    gpus_per_node_source: str | None = None  # "request" | "text" | None (a default is applied downstream)
    model: str | None = None
    gpu: str | None = None
    seq_len: int | None = None
    global_batch_size: int | None = None
    local_batch_size: int | None = None
    pp_microbatch_size: int | None = None
    stated: Stated = field(default_factory=Stated)
    pasted: Pasted = field(default_factory=Pasted)


@dataclass(frozen=True)
class Query:
    text: str  # the question as asked
    lang: Literal["en", "zh"]
    intent: Intent
    params: Params
    topics: tuple[str, ...] = ()  # features / subjects named, for retrieval filters and pitfalls
    retrieval_text: str = ""  # question plus glossary expansion, for the retriever
    injection: bool = False  # the question tried to override rules ("ignore the validator")
    situation: Situation = field(default_factory=Situation)
    asks: tuple[Ask, ...] = ()
