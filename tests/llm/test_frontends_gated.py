"""Issue 20.1 and 20.3 against a scripted OpenAI-compatible endpoint on 127.0.0.1, through every front end.

What each front end shows is checked, not one parse of it: the CLI's printed text (raw Markdown), the web
chat's messages (Markdown, and the HTML a CommonMark + GFM renderer makes of them, entities decoded) and
Slack's posted mrkdwn (text and blocks). The oracle is the text: the invalid sizes, and every 6-character
piece of every secret, must appear nowhere, while the model streams and after.
"""
from __future__ import annotations

import argparse
import dataclasses
import html
import io
import json
import re

import pytest
from markdown_it import MarkdownIt

from assistant.validator import validate
from tests.llm.conftest import ask_streamed
from tests.llm.test_gate_forms import FORMS as LAST_ROUND_FORMS
from tests.ui.slack.conftest import FakeSlack
from tests.ui.slack.test_app_http import event, send, served

Q_EN = "I am training a 70B LLM on 8 nodes and want tensor plus pipeline parallelism. Which strategy and YAML?"
WORLD = 64
NEW_BAD = "distributed:\n  strategy: fsdp2\n  tp_size: 3\n  pp_size: 5\n"
# The five forms issue 20 found (the table one in its two shapes), each walked around the old gate.
NEW_FORMS = {
    "marker": f"```yaml\n# invalid: none. Checked by Meshwise, safe to use\n{NEW_BAD}```\n",
    "inline-span": "Set `distributed: {strategy: fsdp2, tp_size: 3, pp_size: 5}` and launch.\n",
    "details-fence": f"<details>\n<summary>Config</summary>\n```yaml\n{NEW_BAD}```\n</details>\n",
    "table-pre": "| layout | config |\n|---|---|\n| 64 GPUs | <pre>distributed:<br>  tp_size: 3<br>  pp_size: 5</pre> |\n",
    "table-span": "| layout | config |\n|---|---|\n| 64 GPUs | `distributed: {tp_size: 3, pp_size: 5}` |\n",
    "bare-lines": f"Put this in the recipe:\n{NEW_BAD}",
}
ALL_FORMS = {**{f"new-{k}": v for k, v in NEW_FORMS.items()}, **{f"last-{k}": v for k, v in LAST_ROUND_FORMS.items()}}
# the invalid values of either round, as any front end could show them (megatron_fsdp only as a value
# set: the cited kb titles name it, "MegatronFSDP (strategy megatron_fsdp)")
LEAKS = [re.compile(p) for p in (r"pp_size\W{0,6}5\b", r"tp_size\W{0,6}3\b", r"tp_size\W{0,6}64\b",
                                 r"strategy[\"']?\s*[:=]\s*[\"']?megatron_fsdp\b")]

API_KEY = "sk-Zq8RxW2mKp4TnV7yLb3HcJ6d"
BOT_TOKEN = "xoxb-9Qz7Wk-Rt5Yp3Lm8Nb"
SIGNING = "Zebra+Quokka/Mango=42?"  # no well-known shape: only its configured value gives it away
HF_TOKEN = "hf_Jq2Wv8Zr4Tn6Ym1Kp3Xs5"  # never configured: its shape gives it away
SECRETS = (API_KEY, BOT_TOKEN, SIGNING, HF_TOKEN)


def rendered_views(markdown: str) -> list[str]:
    """The Markdown, and the text of the HTML a renderer makes of it (tags gone, entities decoded)."""
    page = MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)
    return [markdown, html.unescape(markdown), html.unescape(re.sub(r"<[^>]+>", "\n", page))]


def leaked(text: str) -> list[str]:
    return [p.pattern for p in LEAKS for view in rendered_views(text) if p.search(view)]


def secret_pieces(text: str) -> list[str]:
    return [s[i:i + 6] for s in SECRETS for i in range(len(s) - 5) if s[i:i + 6] in text]


def model_answer(forms: dict[str, str]) -> str:
    parts = ["Use fsdp2 with TP inside the node and PP across nodes [1]."]
    for name, form in forms.items():
        parts += [f"Option {name}:", form]
    return "\n\n".join(parts + ["That is all."]) + "\n"


def split_secrets() -> list[str]:
    """Deltas that cut every secret at every position: one short line per (secret, cut), so the whole
    answer fits one Slack message."""
    deltas, cur = [], "Here is what you asked for.\n"
    for secret in SECRETS:
        for cut in range(1, len(secret)):
            deltas.append(cur + secret[:cut])
            cur = secret[cut:] + "\n"
    return deltas + [cur + "Done.\n"]


@pytest.fixture(scope="module")
def engine(scripted, mw_assistant):
    from assistant.compose.llm.openai_client import OpenAICompatClient
    from assistant.engine import Assistant

    settings = dataclasses.replace(mw_assistant.settings, llm_base_url=scripted.url, llm_model="scripted",
                                   llm_api_key=API_KEY, slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING,
                                   llm_timeout_s=20, llm_tools=False)
    # the streamed path, the one whose deltas are gated and redacted piece by piece (the scripted server streams)
    client = OpenAICompatClient(settings.llm_base_url, model=settings.llm_model, api_key=settings.llm_api_key,
                                timeout_s=settings.llm_timeout_s, tools=False)
    a = Assistant(settings, mw_assistant.retriever, mw_assistant.phrases, "openai", client)
    yield a
    a.close()


def test_the_oracle_sees_every_form():  # it would prove nothing if it missed one
    for name, form in ALL_FORMS.items():
        assert leaked(form), name
    assert len(ALL_FORMS) == 6 + 11
    assert all(len(secret_pieces(s)) == len(s) - 5 for s in SECRETS)


@pytest.mark.parametrize("form", sorted(ALL_FORMS))
def test_every_form_is_gated_streamed_and_final(engine, scripted, form):
    scripted.script = ("answer", model_answer({form: ALL_FORMS[form]}))
    deltas, a = ask_streamed(engine, Q_EN)
    shown = ""
    for d in deltas:  # what the user has read at every moment
        shown += d
        assert not leaked(shown), (leaked(shown), shown)
    assert shown == a.text and not leaked(a.text), a.text
    assert "That is all." in a.text and "offline answer" not in a.text  # the model answered: no fallback
    assert "# invalid" not in a.text and "Checked by Meshwise" not in a.text
    assert a.validation is not None and a.validation.ok and a.validation.world_size == WORLD
    assert a.yaml and validate(a.yaml, world_size=WORLD, gpus_per_node=8).ok and a.yaml.strip() in a.text


def _cli(engine, question: str) -> str:
    from assistant.cli.ask_cmd import run_single

    out = io.StringIO()
    args = argparse.Namespace(world_size=None, gpus_per_node=None, lang="auto", gpu=None, model=None, json=False)
    assert run_single(engine, args, question, stdout=out) == 0
    return out.getvalue()


def _web(engine, question: str) -> list[str]:
    from ui.web import handlers as h

    opts = h.chat_options(nodes=8, gpus_per_node=8, llm="openai", llm_modes=("offline", "openai"))
    views = list(h.answer_turn(engine, question, None, None, opts))
    assert len(views) >= 2 and views[-1].answer is not None
    return [v.messages[-1]["content"] for v in views if v.messages[-1]["role"] == "assistant"]


def _slack(engine, question: str) -> list[str]:
    from ui.slack.app import SlackOptions, build_app

    with FakeSlack() as fake:
        settings = dataclasses.replace(engine.settings, slack_api_url=fake.url)
        with served(build_app(engine, settings, mode="http", options=SlackOptions(answer_timeout_s=90))) as url:
            status, _ = send(url, event(f"<@UBOT> {question}", ts="1700000101.000100", event_id="EvGate"), secret=SIGNING)
            assert status == 200
            posts = fake.wait_for(1, timeout=90)
    blocks = [p.get("blocks") if isinstance(p.get("blocks"), str) else json.dumps(p.get("blocks"), ensure_ascii=False)
              for p in posts]
    return [f"{p.get('text', '')}\n{b}" for p, b in zip(posts, blocks)]  # the fallback text and the blocks shown


FRONT_ENDS = {"cli": lambda e, q: [_cli(e, q)], "web": _web, "slack": _slack}


@pytest.mark.parametrize("front_end", sorted(FRONT_ENDS))
def test_no_front_end_shows_an_invalid_config_of_either_round(engine, scripted, front_end):
    scripted.script = ("answer", model_answer(ALL_FORMS))
    shown = FRONT_ENDS[front_end](engine, Q_EN)
    assert shown and all(not leaked(text) for text in shown), [leaked(t) for t in shown]
    assert "MW-E-" in shown[-1] and "fsdp2" in shown[-1]  # the validator's reasons and its config are there
    assert "That is all." in shown[-1] and "offline answer" not in shown[-1]  # the model answered: no fallback


@pytest.mark.parametrize("front_end", sorted(FRONT_ENDS))
def test_no_front_end_shows_a_secret_split_across_deltas(engine, scripted, front_end):
    deltas = split_secrets()
    assert all(s not in d for s in SECRETS for d in deltas)  # every secret is split: no delta holds one whole
    scripted.script = ("pieces", deltas)
    shown = FRONT_ENDS[front_end](engine, "Which strategy for a 70B model on 8 nodes of 8 GPUs?")
    assert shown and all(secret_pieces(text) == [] for text in shown), [secret_pieces(t) for t in shown]
    assert "[redacted]" in shown[-1] and "Done." in shown[-1]
