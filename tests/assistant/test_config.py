from pathlib import Path

import pytest

from assistant.config import load_settings


def test_env_overrides_file_and_defaults(tmp_path):
    cfg = tmp_path / "m.toml"
    cfg.write_text('llm_base_url = "http://127.0.0.1:9/v1"\nllm_model = "from-file"\nembed_models = ["minilm"]\n')
    s = load_settings(env={"MESHWISE_CONFIG": str(cfg), "MESHWISE_LLM_MODEL": "from-env", "MESHWISE_DATA_DIR": str(tmp_path)})
    assert s.llm_base_url == "http://127.0.0.1:9/v1" and s.llm_model == "from-env"
    assert s.embed_models == ("minilm",)
    assert s.index_dir == tmp_path / "index"  # follows the data dir unless set on its own
    assert s.llm_configured


def test_unknown_key_and_oversized_file_are_clear_errors(tmp_path):
    cfg = tmp_path / "m.toml"
    cfg.write_text('llm_url = "x"\n')
    with pytest.raises(ValueError, match="unknown key 'llm_url'"):
        load_settings(env={"MESHWISE_CONFIG": str(cfg)})
    cfg.write_text("# " + "x" * 70000)
    with pytest.raises(ValueError, match="larger than"):
        load_settings(env={"MESHWISE_CONFIG": str(cfg)})


def test_redacted_hides_secrets(tmp_path):
    s = load_settings(env={"MESHWISE_CONFIG": str(tmp_path / "none.toml"), "MESHWISE_LLM_API_KEY": "sk-secret",
                           "SLACK_BOT_TOKEN": "xoxb-secret"})
    r = s.redacted()
    assert r["llm_api_key"] == "<set>" and r["slack_bot_token"] == "<set>"
    assert "sk-secret" not in repr(r) and "xoxb-secret" not in repr(r)


@pytest.mark.parametrize("line,key,must", [
    ("llm_timeout_s = -1", "llm_timeout_s", "above 0"),
    ('llm_timeout_s = "sk-live-0123456789abcdef"', "llm_timeout_s", "a number of seconds"),
    ('slack_bot_token = ["xoxb-1234567890-abcdef"]', "slack_bot_token", "a non-empty string"),
    ("llm_base_url = 8000", "llm_base_url", "a non-empty string"),
    ('embed_models = [1, 2]', "embed_models", "a list of model names"),
    ('llm_api_key = ""', "llm_api_key", "a non-empty string"),
])
def test_a_wrong_type_is_refused_at_start_up_naming_the_key_not_the_value(tmp_path, line, key, must):
    """Issue 20.7: the error names the key and what it must be, and never prints the value back."""
    from assistant.config import ConfigError

    cfg = tmp_path / "m.toml"
    cfg.write_text(line + "\n")
    with pytest.raises(ConfigError) as err:
        load_settings(env={"MESHWISE_CONFIG": str(cfg)})
    msg = str(err.value)
    assert key in msg and must in msg
    value = line.split("=", 1)[1].strip().strip('[]"')
    # the file's own path is named, and a tmp path such as /tmp/pytest-1/... can hold the value's characters
    assert not value or value not in msg.replace(str(cfg), "")


def test_an_environment_value_that_cannot_be_used_names_the_variable(tmp_path):
    from assistant.config import ConfigError

    with pytest.raises(ConfigError, match="MESHWISE_LLM_TIMEOUT must be a number") as err:
        load_settings(env={"MESHWISE_CONFIG": str(tmp_path / "none.toml"), "MESHWISE_LLM_TIMEOUT": "xoxb-secret-token"})
    assert "xoxb" not in str(err.value)


def test_a_bad_config_file_is_one_line_at_start_up_not_a_traceback(tmp_path):
    import subprocess
    import sys

    from assistant.config import REPO_ROOT

    cfg = tmp_path / "m.toml"
    cfg.write_text('llm_base_url = 8000\nslack_bot_token = ["xoxb-1234567890-abcdef"]\n')
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT), "MESHWISE_CONFIG": str(cfg),
           "MESHWISE_DATA_DIR": str(tmp_path)}
    p = subprocess.run([sys.executable, "-m", "assistant.cli", "ingest", "--list"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "llm_base_url" in p.stderr
    assert "xoxb" not in p.stderr and "8000" not in p.stderr
