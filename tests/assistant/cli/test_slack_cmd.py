import os
import subprocess
import sys


def _run(args, **env):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "MESHWISE_"))}
    base.update(env)
    return subprocess.run([sys.executable, "-m", "assistant.cli", "slack", *args], capture_output=True, text=True,
                          env=base, timeout=60)


def test_missing_tokens_are_one_line_errors_naming_the_variable(tmp_path):
    cfg = str(tmp_path / "none.toml")
    r = _run(["--mode", "http"], MESHWISE_CONFIG=cfg)
    assert r.returncode == 2 and "SLACK_BOT_TOKEN" in r.stderr and "Traceback" not in r.stderr
    r = _run(["--mode", "http"], MESHWISE_CONFIG=cfg, SLACK_BOT_TOKEN="xoxb-hidden-value")
    assert r.returncode == 2 and "SLACK_SIGNING_SECRET" in r.stderr
    assert "xoxb-hidden-value" not in r.stderr + r.stdout  # tokens are never echoed
    r = _run(["--mode", "socket"], MESHWISE_CONFIG=cfg, SLACK_BOT_TOKEN="xoxb-hidden-value")
    assert r.returncode == 2 and "SLACK_APP_TOKEN" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
