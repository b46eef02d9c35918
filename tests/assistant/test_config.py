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
