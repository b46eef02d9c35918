"""Parameters from free text: many phrasings per parameter, in English and in Chinese."""
from __future__ import annotations

import pytest

from assistant.understand.params import extract_params
from assistant.understand.pasted import split_pasted


def extract_yaml(text):
    """(first pasted config, the prose): the old helper's shape, read from split_pasted."""
    p = split_pasted(text)
    return (p.configs[0] if p.configs else None), p.prose

# (question, expected subset of Params fields)
EN = [
    # model size and name
    ("I am training a 70B LLM on 8 nodes", {"model_size_b": 70.0, "nodes": 8}),
    ("fine-tune Llama 3.1 70B", {"model": "llama-3.1-70b", "model_size_b": 70.6}),
    ("llama3.1-8b-instruct on one node", {"model": "llama-3.1-8b", "nodes": 1}),
    ("Meta-Llama-3.1-405B with 128 GPUs", {"model": "llama-3.1-405b", "world_size": 128}),
    ("What about a 1.5B model?", {"model_size_b": 1.5}),
    ("a 7 billion parameter model", {"model_size_b": 7.0}),
    ("Qwen3-30B-A3B on 8 GPUs", {"model": "qwen3-30b-a3b", "is_moe": True, "num_experts": 128, "world_size": 8}),
    ("qwen3 235b on 4 nodes", {"model": "qwen3-235b-a22b", "is_moe": True, "nodes": 4}),
    ("a 30B-A3B MoE", {"model_size_b": 30.0, "active_size_b": 3.0, "is_moe": True}),
    ("DeepSeek-V3 on 256 GPUs", {"model": "deepseek-v3", "is_moe": True, "num_experts": 256, "world_size": 256}),
    ("Mixtral 8x7B", {"model": "mixtral-8x7b", "is_moe": True, "num_experts": 8, "model_size_b": 46.7}),
    ("an MoE with 64 experts", {"is_moe": True, "num_experts": 64}),
    ("a dense 13B model", {"is_moe": False, "model_size_b": 13.0}),
    ("gpt-oss-120b training", {"model": "gpt-oss-120b", "is_moe": True}),
    # nodes and GPUs
    ("8 nodes x 8 GPUs", {"nodes": 8, "gpus_per_node": 8, "world_size": 64}),
    ("4 nodes with 8 H100s each", {"nodes": 4, "gpus_per_node": 8, "world_size": 32, "gpu": "h100-80gb"}),
    ("2 machines of 4 GPUs", {"nodes": 2, "gpus_per_node": 4, "world_size": 8}),
    ("16 GPUs across 2 nodes", {"world_size": 16, "nodes": 2, "gpus_per_node": 8}),
    # a count above one node's 8 that the nodes divide, with no "each" / "per node", is the total
    ("Llama 3 70B on 8 nodes, 64 GPUs H100", {"world_size": 64, "nodes": 8, "gpus_per_node": 8}),
    ("3 nodes, 24 GPUs total", {"world_size": 24, "nodes": 3, "gpus_per_node": 8}),
    ("2 nodes, 8 GPUs each", {"world_size": 16, "nodes": 2, "gpus_per_node": 8}),
    ("64 GPUs", {"world_size": 64}),
    ("on 32 A100s", {"world_size": 32, "gpu": "a100-80gb"}),
    ("a single GPU", {"world_size": 1}),
    ("one node", {"nodes": 1}),
    ("two nodes", {"nodes": 2}),
    ("sixteen nodes", {"nodes": 16}),
    ("8 GPUs per node", {"gpus_per_node": 8}),
    ("each node has 4 GPUs and we have 3 nodes", {"gpus_per_node": 4, "nodes": 3, "world_size": 12}),
    ("4 8-GPU nodes", {"nodes": 4, "gpus_per_node": 8, "world_size": 32}),
    ("8x8 H100", {"nodes": 8, "gpus_per_node": 8, "world_size": 64}),
    ("world size 7", {"world_size": 7}),
    ("--world-size 16", {"world_size": 16}),
    # GPU type and memory
    ("H100 80G", {"gpu": "h100-80gb", "gpu_memory_gb": 80}),
    ("A100 40GB cards", {"gpu": "a100-40gb", "gpu_memory_gb": 40}),
    ("on H200s", {"gpu": "h200-141gb"}),
    ("8 RTX 4090 GPUs", {"gpu": "rtx-4090-24gb", "gpu_memory_gb": 24, "world_size": 8}),
    ("8 张 4090", {"gpu": "rtx-4090-24gb", "gpu_memory_gb": 24}),
    ("on A100s", {"gpu": "a100-80gb", "gpu_memory_gb": 80}),
    ("16 张 H20", {"gpu": None, "gpu_memory_gb": 96}),
    # sequence length
    ("seq len 8192", {"seq_len": 8192}),
    ("32k context", {"seq_len": 32768}),
    ("sequence length of 4096", {"seq_len": 4096}),
    ("128K tokens per sample", {"seq_len": 131072}),
    ("long 64k sequences", {"seq_len": 65536}),
    # features wanted and excluded
    ("want tensor plus pipeline parallelism", {"wanted": {"tp", "pp"}}),
    ("TP+PP please", {"wanted": {"tp", "pp"}}),
    ("no PP", {"unwanted": {"pp"}}),
    ("without pipeline parallelism but with TP", {"unwanted": {"pp"}, "wanted": {"tp"}}),
    ("I don't want to use TP", {"unwanted": {"tp"}}),
    ("enable sequence parallel and activation checkpointing", {"wanted": {"sp", "ac"}}),
    ("with HSDP across nodes", {"wanted": {"hsdp"}}),
    ("context parallelism and sequence packing", {"wanted": {"cp", "packing"}}),
    ("expert parallelism", {"wanted": {"ep"}}),
    # sizes fixed by the user
    ("tp_size=8 and pp_size: 4", {"tp_size": 8, "pp_size": 4, "wanted": {"tp", "pp"}}),
    ("8-way tensor parallelism", {"tp_size": 8}),
    ("tp 4, cp 2", {"tp_size": 4, "cp_size": 2}),
    ("ep 16", {"ep_size": 16}),
    ("pp 1", {"pp_size": 1, "unwanted": {"pp"}}),
    # batch sizes
    ("global batch size 512 and local batch size 4", {"global_batch_size": 512, "local_batch_size": 4}),
    ("gbs=256, micro batch 2", {"global_batch_size": 256, "local_batch_size": 2}),
    # strategies
    ("Can I use megatron_fsdp?", {"strategy": "megatron_fsdp"}),
    ("Megatron FSDP with TP", {"strategy": "megatron_fsdp"}),
    ("use DDP", {"strategy": "ddp"}),
    ("FSDP2 please", {"strategy": "fsdp2"}),
    ("fsdp2 or ddp?", {"strategy": None}),
    ("use fsdp2 instead of ddp", {"strategy": "fsdp2"}),
    ("We are leaving fsdp2 for ddp to keep things simple", {"strategy": "ddp"}),  # the strategy left is not the one asked
    ("moving off fsdp2 to megatron_fsdp", {"strategy": "megatron_fsdp"}),
]

ZH = [
    ("64 张 H100 训练 Llama 3.1 70B", {"world_size": 64, "gpu": "h100-80gb", "model": "llama-3.1-70b"}),
    ("8 节点 每节点 8 卡", {"nodes": 8, "gpus_per_node": 8, "world_size": 64}),
    ("8 个节点，每个节点 8 张卡", {"nodes": 8, "gpus_per_node": 8, "world_size": 64}),
    ("两台机器", {"nodes": 2}),
    ("三台服务器，每台 4 张 A100", {"nodes": 3, "gpus_per_node": 4, "world_size": 12, "gpu": "a100-80gb"}),
    ("单机8卡", {"nodes": 1, "gpus_per_node": 8, "world_size": 8}),
    ("4机32卡", {"nodes": 4, "gpus_per_node": 8, "world_size": 32}),
    ("2 机 16 卡", {"nodes": 2, "gpus_per_node": 8, "world_size": 16}),
    ("单卡训练", {"world_size": 1}),
    ("一张卡能跑吗", {"world_size": 1}),
    ("十六张卡", {"world_size": 16}),
    ("三十二 张 GPU", {"world_size": 32}),
    ("每台机器 4 张卡，共 2 台", {"gpus_per_node": 4}),
    ("双机", {"nodes": 2}),
    ("H100 80G 的卡", {"gpu": "h100-80gb", "gpu_memory_gb": 80}),
    ("80G 显存的 A100", {"gpu": "a100-80gb"}),
    ("A100 40G，7B 模型", {"gpu": "a100-40gb", "model_size_b": 7.0}),
    ("700亿参数的模型", {"model_size_b": 70.0}),
    ("70B 模型", {"model_size_b": 70.0}),
    ("qwen3 235b 在 4 个节点上", {"model": "qwen3-235b-a22b", "nodes": 4}),
    ("Qwen3-30B-A3B 混合专家模型", {"model": "qwen3-30b-a3b", "is_moe": True}),
    ("一个 MoE 模型，128 个专家", {"is_moe": True, "num_experts": 128}),
    ("稠密模型 32B", {"is_moe": False, "model_size_b": 32.0}),
    ("DeepSeek V3 训练", {"model": "deepseek-v3"}),
    ("序列长度 32k", {"seq_len": 32768}),
    ("128K 上下文", {"seq_len": 131072}),
    ("上下文长度为 8192", {"seq_len": 8192}),
    ("16k 的序列", {"seq_len": 16384}),
    ("要 TP+PP", {"wanted": {"tp", "pp"}}),
    ("不要流水线", {"unwanted": {"pp"}}),
    ("不用张量并行", {"unwanted": {"tp"}}),
    ("想用张量并行和流水线并行", {"wanted": {"tp", "pp"}}),
    ("开启上下文并行", {"wanted": {"cp"}}),
    ("需要专家并行", {"wanted": {"ep"}}),
    ("用 HSDP 混合分片", {"wanted": {"hsdp"}}),
    ("开启激活检查点", {"wanted": {"ac"}}),
    ("序列并行和序列打包", {"wanted": {"sp", "packing"}}),
    ("禁用重计算", {"unwanted": {"ac"}}),
    ("tp 设为 8", {"tp_size": 8}),
    ("张量并行度 4，流水线并行 2", {"tp_size": 4, "pp_size": 2}),
    ("8 路张量并行", {"tp_size": 8}),
    ("ep_size 为 32", {"ep_size": 32}),
    ("全局 batch 512，每卡 batch 2", {"global_batch_size": 512, "local_batch_size": 2}),
    ("megatron_fsdp 支持流水线并行吗", {"strategy": "megatron_fsdp", "wanted": {"pp"}}),
    ("ddp 能开 TP 吗", {"strategy": "ddp", "wanted": {"tp"}}),
    ("用 fsdp2", {"strategy": "fsdp2"}),
    ("不用 ddp，用 fsdp2", {"strategy": "fsdp2"}),
    ("如果只有 4 个节点呢?", {"nodes": 4}),
    ("ＴＰ＝８，６４ 卡", {"tp_size": 8, "world_size": 64}),
]


def _check(q: str, expected: dict) -> None:
    p = extract_params(q)
    for key, want in expected.items():
        got = getattr(p, key)
        if isinstance(want, set):
            assert want <= set(got), f"{q!r}: {key}={got!r}, expected to include {want!r}"
        elif isinstance(want, float):
            assert got is not None and abs(got - want) < 0.05, f"{q!r}: {key}={got!r}, expected {want!r}"
        else:
            assert got == want, f"{q!r}: {key}={got!r}, expected {want!r}"


@pytest.mark.parametrize("q,expected", EN, ids=[q[:40] for q, _ in EN])
def test_english(q, expected):
    _check(q, expected)


@pytest.mark.parametrize("q,expected", ZH, ids=[q[:20] for q, _ in ZH])
def test_chinese(q, expected):
    _check(q, expected)


def test_enough_cases_in_each_language():
    assert len(EN) >= 30 and len(ZH) >= 30


@pytest.mark.parametrize("q", [
    "How does FSDP2 shard parameters?",
    "什么是 HSDP？",
    "",
])
def test_nothing_invented(q):
    p = extract_params(q)
    assert p.world_size is None and p.nodes is None and p.model_size_b is None and p.seq_len is None


def test_gpu_memory_not_a_model_size_or_count():
    p = extract_params("8 H100 80GB GPUs")
    assert p.world_size == 8 and p.model_size_b is None and p.gpu == "h100-80gb"


def test_model_size_not_a_gpu_count():
    p = extract_params("a 70B model on 16 GPUs")
    assert p.world_size == 16 and p.model_size_b == 70.0


def test_negation_stays_in_its_clause():
    p = extract_params("we use TP, no PP")
    assert p.wanted == {"tp"} and p.unwanted == {"pp"}
    p = extract_params("不要 TP 和 PP，要 CP")
    assert {"tp", "pp"} <= p.unwanted and "cp" in p.wanted


@pytest.mark.parametrize("q,excluded", [
    ("64k 长序列 SFT，8 卡，cp 和 pp 都不想开，有啥省显存的配法？", {"cp", "pp"}),
    ("tp、pp、cp 都不打算用", {"tp", "pp", "cp"}),
    ("TP and PP both off, 8 GPUs", {"tp", "pp"}),
])
def test_a_negation_after_a_chain_excludes_every_name_in_it(q, excluded):
    p = extract_params(q)
    assert p.unwanted == excluded and not p.wanted & excluded


def test_a_wish_after_a_chain_stays_a_wish():
    assert extract_params("cp 和 pp 都开").wanted == {"cp", "pp"}
    assert extract_params("cp 不想开，pp 可以").unwanted == {"cp"}


def test_limitation_question_is_not_an_exclusion():
    p = extract_params("Does megatron_fsdp not support PP?")
    assert "pp" in p.wanted and "pp" not in p.unwanted
    p = extract_params("megatron_fsdp 不支持 PP 吗")
    assert "pp" in p.wanted


class TestYaml:
    def test_fenced(self):
        text = "Is this valid?\n```yaml\ndistributed:\n  strategy: megatron_fsdp\n  pp_size: 2\n```\nthanks"
        y, rest = extract_yaml(text)
        assert y == "distributed:\n  strategy: megatron_fsdp\n  pp_size: 2\n"
        assert "thanks" in rest and "pp_size" not in rest

    def test_bare_block_then_prose(self):
        text = "distributed:\n  strategy: fsdp2\n  tp_size: 3\nWhat is wrong with this on 8 GPUs?"
        y, rest = extract_yaml(text)
        assert y == "distributed:\n  strategy: fsdp2\n  tp_size: 3\n"
        assert rest.startswith("What is wrong")
        assert extract_params(text).world_size == 8

    def test_inline_mapping(self):
        y, _ = extract_yaml("check distributed: {strategy: ddp, tp_size: 2} please")
        assert y is not None and "tp_size: 2" in y

    def test_sizes_inside_yaml_are_not_user_wishes(self):
        p = extract_params("```yaml\ndistributed:\n  tp_size: 8\n  pp_size: 4\n```\n为什么报错？")
        assert p.yaml_text and p.tp_size is None and not p.wanted

    def test_chinese_prose_around(self):
        text = "帮我看看这个配置：\n```\ndistributed:\n  strategy: ddp\n  tp_size: 2\n```\n有什么问题？"
        p = extract_params(text)
        assert p.yaml_text == "distributed:\n  strategy: ddp\n  tp_size: 2\n"
        assert p.strategy is None

    def test_prose_with_colon_is_not_yaml(self):
        y, _ = extract_yaml("model: I use a 70B one")
        assert y is None


def test_long_input_is_bounded():
    p = extract_params("64 GPUs " + "x" * 100_000)
    assert p.world_size == 64


# --- phrasings the eval set exposed ------------------------------------------------------------------

@pytest.mark.parametrize("q,expected", [
    # a count glued to Chinese text on the left: "有256张卡"
    ("我们有256张卡，要训练一个700亿参数的稠密模型", {"world_size": 256, "model_size_b": 70.0, "is_moe": False}),
    ("用了64张H100训练", {"world_size": 64, "gpu": "h100-80gb"}),
    ("训练一个70B模型", {"model_size_b": 70.0}),
    ("用128k上下文训练", {"seq_len": 131072}),
    # "8 机": a bare 机 after a count is a machine
    ("70B 模型 8 机训练，TP + PP", {"nodes": 8, "model_size_b": 70.0}),
    ("集群有 8 机，每机 8 卡", {"nodes": 8, "gpus_per_node": 8, "world_size": 64}),
    ("8 nodes训练", {"nodes": 8}),
])
def test_counts_next_to_chinese_text(q, expected):
    p = extract_params(q)
    for key, value in expected.items():
        assert getattr(p, key) == value, (q, key, getattr(p, key))


def test_machine_words_that_are_not_machines():
    assert extract_params("4机制").nodes is None
    assert extract_params("这个 2 机型").nodes is None


@pytest.mark.parametrize("q", [
    "Training a 1B model on 4 GPUs in one workstation. Do I need tensor parallelism at all?",
    "Do I need TP or PP at all?",
    "Is TP necessary for an 8B model?",
    "should I use PP here?",
    "要不要开 TP？",
    "需要开张量并行吗？",
    "有没有必要用流水线并行",
])
def test_asking_whether_a_feature_is_needed_is_no_wish(q):
    p = extract_params(q)
    assert not (p.wanted & {"tp", "pp"}) and not (p.unwanted & {"tp", "pp"}), (q, p.wanted, p.unwanted)


@pytest.mark.parametrize("q,wanted", [
    ("需要 TP 和 PP", {"tp", "pp"}),
    ("How do I enable activation checkpointing?", {"ac"}),
    ("want TP/PP", {"tp", "pp"}),
])
def test_stated_needs_are_still_wishes(q, wanted):
    assert wanted <= extract_params(q).wanted


@pytest.mark.parametrize("q", [
    "The skill doc says ep_size must divide dp_size * cp_size, and dp is only 4.",
    "is (dp*cp*tp) % ep == 0 here?",
    "dp_size = world_size / (tp_size * pp_size * cp_size)",
    "finetune 文档里写的是 (dp_size × cp_size) must be divisible by ep_size",  # × is read as x
])
def test_sizes_inside_a_formula_are_no_wishes(q):
    assert not ({"cp", "tp", "pp"} & extract_params(q).wanted)


def test_formula_does_not_hide_the_stated_sizes():
    p = extract_params("On 8 GPUs, is {tp_size 2, ep_size 8} valid? The doc says ep_size must divide dp_size * cp_size.")
    assert (p.tp_size, p.ep_size, p.world_size) == (2, 8, 8)
    assert p.wanted == {"tp", "ep"}


@pytest.mark.parametrize("q", [
    "I want to cut cross-node traffic by sharding inside each node and replicating across nodes.",
    "shard within the node, replicate across nodes",
    "replicate across nodes and shard within each node",
    "节点内分片，节点间复制",
    "机器之间复制、机器内切分",
])
def test_hsdp_described_without_its_name(q):
    assert "hsdp" in extract_params(q).wanted


@pytest.mark.parametrize("q,field,value", [
    ("Moonlight-16B-A3B（64 个专家）16 张卡，ep_size 能设 16 吗？", "ep_size", 16),
    ("那 16 张卡呢？ep_size 还能用 8 吗？", "ep_size", 8),
    ("can ep_size be 16 on 16 GPUs?", "ep_size", 16),
    ("ep_size 可以设置为 32", "ep_size", 32),
    ("tp 开 4", "tp_size", 4),
    ("How many GPUs for tp 8, pp 4 and cp 2 with at least 2 data-parallel replicas?", "dp_size", 2),
    ("tp 4 pp 3 dp 2 how many GPUs", "dp_size", 2),
    ("2 路数据并行", "dp_size", 2),
    ("数据并行度为 4", "dp_size", 4),
    ("4-way data parallel", "dp_size", 4),
    ("With pp_size 2, local_batch_size 4 and pp_microbatch_size 4 it asserts", "pp_microbatch_size", 4),
    ("流水线微批大小 2", "pp_microbatch_size", 2),
])
def test_sizes_stated_in_many_ways(q, field, value):
    assert getattr(extract_params(q), field) == value


@pytest.mark.parametrize("q,field", [
    ("pp 可以吗？8 卡", "pp_size"),
    ("dp is only 4", "dp_size"),
    ("dp_shard_size 4", "dp_size"),
    ("dp_replicate_size 2", "dp_size"),
    ("tp_size 写成 2.0 会怎样", "tp_size"),
])
def test_no_size_read_where_none_is_stated(q, field):
    assert getattr(extract_params(q), field) is None


def test_pipeline_microbatch_is_not_the_local_batch():
    p = extract_params("pp_microbatch_size 2 and local_batch_size 8")
    assert (p.pp_microbatch_size, p.local_batch_size) == (2, 8)
    assert extract_params("micro batch size 2").local_batch_size == 2  # the per-GPU micro batch is local_batch_size


def test_each_gpu_type_has_one_source_for_its_memory():
    """A type the GPU table knows takes its memory from kb/gpus.yaml; vocab.yaml states memory_gb only
    for the types the table lacks, so no GPU fact lives in two places."""
    from assistant.understand import catalog
    from assistant.understand.params import load_vocab

    for name, (_, vocab_mem) in load_vocab().gpus.items():
        key = catalog.resolve_gpu(name, None)
        assert (key is None) != (vocab_mem is None), (name, key, vocab_mem)


@pytest.mark.parametrize("q, sizes", [
    # a Chinese numeral right after a size's name: "tp 八" was no size at all (a recommendation came back)
    ("十六张卡 tp 八 能跑吗", {"tp_size": 8}),
    ("8卡 pp 设成两 tp 四 dp多少", {"tp_size": 4, "pp_size": 2}),
])
def test_chinese_numerals_after_a_size_name(q, sizes):
    p = extract_params(q)
    assert {k: getattr(p, k) for k in sizes} == sizes


def test_a_chinese_numeral_word_after_a_size_name_is_no_size():
    assert extract_params("tp 一下 能跑吗").tp_size is None


@pytest.mark.parametrize("q, tp, pp", [
    # a size ruled out and then replaced: the replacement is the layout (issue 18)
    ("We can't use TP=3 because 32 heads don't split, so we went with pp 3 and tp 1 on 3 GPUs. OK?", 1, 3),
    ("不能用 tp 3，所以改成 tp 1 pp 3，3 张卡行吗？", 1, 3),
    ("not tp 8, we run tp 4 with pp 2 on 16 GPUs", 4, 2),
    # a size only ever mentioned negated is still the one asked about
    ("why can't I use tp 3 on 8 GPUs?", 3, None),
    ("tp 4 pp 2 on 16 GPUs", 4, 2),
])
def test_a_negated_size_gives_way_to_the_one_stated_after_it(q, tp, pp):
    p = extract_params(q)
    assert (p.tp_size, p.pp_size) == (tp, pp)


def test_a_strategy_named_as_the_one_left_is_not_the_current_one():
    from assistant.understand.params import extract_params

    q = "I switched strategy to megatron_fsdp for a 70B model on 32 GPUs and kept pp_size 2 from my fsdp2 config."
    assert extract_params(q).strategy == "megatron_fsdp"
    assert extract_params("moving from ddp to fsdp2 with tp 2").strategy == "fsdp2"


@pytest.mark.parametrize("text", ["global_batch_size 还是 256，local_batch_size 2", "global_batch_size is still 256, local batch stays at 2"])
def test_a_batch_size_kept_as_it_was_is_still_read(text):
    from assistant.understand.params import extract_params

    p = extract_params(text)
    assert (p.global_batch_size, p.local_batch_size) == (256, 2)


def test_coming_from_another_framework_is_the_story_of_an_earlier_run():
    from assistant.understand.params import history_spans

    prose = "Coming from Megatron, where a run with tp 1 pp 2 failed. In Automodel on 16 GPUs with pp_size 2: dp?"
    spans = history_spans(prose)
    assert spans and spans[0][0] == 0 and "In Automodel" not in prose[spans[0][0]:spans[0][1]]


def test_a_hyphenated_expert_count_and_a_wish_before_the_verb_are_read():
    # issue 18 probes: "a 160-expert MoE", "ep 想直接开 32" (the wish before the adverb)
    assert extract_params("Our 160-expert MoE (own code) dies at setup on 48 GPUs").num_experts == 160
    assert extract_params("我们自己写的 MoE，48 个专家，32 卡 tp 1，ep 想直接开 32，能行吗").ep_size == 32


@pytest.mark.parametrize("text, key, value", [
    ("tp_size 写了 4，启动报错", "tp_size", 4),
    ("同事说 dp_replicate_size 直接写 16 也行", "dp_replicate_size", 16),
])
def test_a_size_written_with_xie_is_that_size(text, key, value):
    # "写" is how a Chinese user says what their YAML holds (issue 18, t9 realzh)
    assert getattr(extract_params(text), key) == value


def test_neng_bu_neng_asks_about_a_feature_it_does_not_exclude():
    # "能不能开 cp" is the A-not-A question form, not "不能开 cp"
    p = extract_params("顺便问 ddp 能不能开 cp")
    assert "cp" in p.wanted and "cp" not in p.unwanted
