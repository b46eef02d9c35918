"""A story about an earlier run ("之前 ... 现在 ...", "We ran this with Megatron-LM before") keeps its
numbers only where the question does not restate them: the run asked about is the one judged."""
from __future__ import annotations

from assistant.understand.params import extract_params, history_spans


def test_restated_sizes_and_world_win_over_the_run_left_behind():
    p = extract_params("之前 64 卡 tp 2 的时候 global_batch_size 512、local_batch_size 2。"
                       "现在缩到 32 卡、tp 改成 4，gbs 和 lbs 都不变，梯度累积几步？")
    assert (p.world_size, p.tp_size) == (32, 4)
    assert (p.global_batch_size, p.local_batch_size) == (512, 2)  # "不变": the story's batch sizes hold


def test_the_framework_a_user_comes_from_is_not_a_strategy():
    p = extract_params("之前 Megatron 里 tp 8、pp 4、ep 16，micro_batch_size 2 跑 GLM-4.5-Air。"
                       "搬到 AutoModel：64 张 H100，local_batch_size 2、global 16，能跑不？")
    assert p.strategy is None and (p.tp_size, p.pp_size, p.ep_size) == (8, 4, 16)
    assert p.world_size == 64 and p.local_batch_size == 2
    en = extract_params("We ran this with Megatron-LM before (tp 4, pp 2). Moving to AutoModel on 16 GPUs: "
                        "tp 4, pp 2, local_batch_size 1. Will it start?")
    assert en.strategy is None and en.local_batch_size == 1


def test_a_strategy_named_for_the_run_asked_about_stays():
    assert extract_params("Is megatron_fsdp with tp 4 on 16 GPUs valid?").strategy == "megatron_fsdp"
    assert extract_params("用 megatron 策略，16 卡 tp 4 行不行？").strategy == "megatron_fsdp"


def test_before_as_a_conjunction_is_no_history():
    q = "Quick sanity check before I submit: 16 GPUs, fsdp2, tp 4, pp 2. Valid?"
    assert history_spans(q) == []
    assert extract_params(q).strategy == "fsdp2"


def test_a_question_that_is_all_story_keeps_its_numbers():
    p = extract_params("之前用 tp 4 pp 2 在 16 卡上为什么 OOM")
    assert (p.tp_size, p.pp_size, p.world_size) == (4, 2, 16)


def test_a_value_a_few_words_after_the_size_name():
    assert extract_params("16 卡，tp 2，ep_size 要是比卡数还大，比如设成 32 会怎样？").ep_size == 32
    assert extract_params("pp_size=4，pipeline 的 pp_microbatch_size 我设的是 2").pp_microbatch_size == 2


def test_nodes_counted_with_a_classifier():
    p = extract_params("2 个节点 16 卡，tp1 pp2 cp1 ep2")
    assert (p.nodes, p.gpus_per_node, p.world_size) == (2, 8, 16)


def test_a_size_changed_with_other_verbs_is_the_run_asked_about():
    p = extract_params("之前用 pp 8 能跑，现在 pp 减到 4，local_batch_size 保持 4，pp_microbatch_size 2，还能跑吗？16 卡 tp 2")
    assert (p.pp_size, p.local_batch_size, p.pp_microbatch_size) == (4, 4, 2)
    en = extract_params("We had pp 8 working on 32 GPUs; pp reduced to 4 now, local_batch_size 4 and "
                        "pp_microbatch_size 2. Does it still start?")
    assert (en.pp_size, en.world_size, en.local_batch_size) == (4, 32, 4)


def test_dp_size_written_as():
    assert extract_params("8 卡机器上 dp_size 写成 1，tp pp cp 都是 1，这样跑会卡住吗？").dp_size == 1


def test_a_number_someone_else_claims_is_not_the_users_world():
    p = extract_params("In our GPT-OSS-20B config we have data_parallel_size 8 and expert_parallel_size 8 on a single "
                       "node with 8 GPUs. A colleague says that needs 64 GPUs because dp and ep multiply. In Automodel "
                       "terms (fsdp2, ep_size 8, dp inferred), does ep need extra GPUs?")
    assert (p.world_size, p.ep_size, p.strategy) == (8, 8, "fsdp2")
    zh = extract_params("单机 8 卡，dp 8、ep 8。同事说这样要 64 张卡，因为 dp 和 ep 相乘。ep 要额外占卡吗？")
    assert zh.world_size == 8


def test_a_claim_alone_is_the_layout_asked_about():
    assert extract_params("A colleague says 64 GPUs are needed for ep 8. True?").world_size == 64


def test_a_claim_with_no_number_keeps_the_strategy_it_is_about():
    # "a colleague claims ddp supports tp": what a strategy does, not another person's run
    assert extract_params("A colleague claims ddp supports tp. We want tp 2 on 4 GPUs, true?").strategy == "ddp"
    assert extract_params("听说 megatron_fsdp 开不了 cp，是吧？我们 8 卡 cp_size 2").strategy == "megatron_fsdp"
    # another person's run keeps its numbers and strategy to itself
    p = extract_params("A teammate set ep_size: 32 with megatron_fsdp and it crashed. We use fsdp2 on 16 GPUs.")
    assert p.strategy == "fsdp2"
