"""The device-mesh picture attached to a Slack validation reply, when the workspace lets the bot upload files.

Uploads go through slack_sdk's `files_upload_v2` (files.getUploadURLExternal, the upload, then
files.completeUploadExternal). A bot without the `files:write` scope gets `missing_scope` once; after that
this app stops trying, and replies stay text only. Nothing here decides: the picture is ui/plots/mesh.py's.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError

from assistant.defaults import DEFAULT_GPUS_PER_NODE
from assistant.validator.report import ValidationReport

log = logging.getLogger("meshwise.slack")

# Errors that mean this token may never upload; anything else (a channel the bot is not in) is per reply.
_NO_UPLOADS = frozenset({"missing_scope", "not_allowed_token_type", "no_permission", "not_authed", "invalid_auth",
                         "ekm_access_denied", "team_access_not_granted"})


@dataclass
class Uploads:
    """Whether the bot can upload files: on until Slack says the token cannot."""

    enabled: bool = True
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def disable(self, reason: str) -> None:
        with self._lock:
            if self.enabled:
                log.info("Slack refused a file upload (%s): mesh pictures are off for this app", reason)
            self.enabled = False


def mesh_png(report: ValidationReport | None, lang: str) -> bytes | None:
    """The PNG of a valid layout's device mesh, or None (an invalid config has no mesh to draw)."""
    if report is None or not report.ok or report.derived is None:
        return None
    from ui.plots.mesh import mesh_picture
    from ui.plots.scene import to_png

    return to_png(mesh_picture(report.derived, report.gpus_per_node or DEFAULT_GPUS_PER_NODE, lang=lang))


def _name(report: ValidationReport) -> str:
    d = report.derived
    sizes = "-".join(f"{n}{s}" for n, s in zip(d.mesh_dim_names, d.mesh_shape) if s > 1) or "dp"
    return f"mesh-{d.strategy}-{d.world_size}-{sizes}.png"


def attach_mesh(client: WebClient, uploads: Uploads, *, channel: str, report: ValidationReport | None, lang: str,
                thread_ts: str | None = None, comment: str | None = None) -> bool:
    """Upload the picture into the reply's channel (and thread); True when it was uploaded. Never raises."""
    if not uploads.enabled or not channel:
        return False
    try:
        png = mesh_png(report, lang)
    except Exception:  # noqa: BLE001 - a drawing bug costs the picture, never the reply
        log.exception("mesh picture failed")
        return False
    if png is None:
        return False
    title = "Device mesh：每个 rank 的位置" if lang == "zh" else "Device mesh: where every rank sits"
    try:
        client.files_upload_v2(channel=channel, thread_ts=thread_ts, content=png, filename=_name(report),
                               title=title, alt_txt=title, initial_comment=comment)
    except SlackApiError as exc:
        error = str(exc.response.get("error", "")) if exc.response is not None else ""
        if error in _NO_UPLOADS:
            uploads.disable(error)
        else:
            log.warning("mesh picture upload to %s failed: %s", channel, error or exc)
        return False
    except (SlackClientError, OSError) as exc:
        log.warning("mesh picture upload to %s failed: %s", channel, exc)
        return False
    return True
