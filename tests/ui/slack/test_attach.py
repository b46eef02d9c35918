"""The mesh picture on Slack (ui/slack/attach.py): uploaded with files_upload_v2 against the local fake Slack
Web API; never for an invalid config; off for good once Slack says the token may not upload files."""
from __future__ import annotations

import json

from slack_sdk import WebClient

from assistant.validator import validate
from ui.slack.attach import Uploads, attach_mesh

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TP_PP = {"distributed": {"strategy": "fsdp2", "tp_size": 8, "pp_size": 4,
                         "pipeline": {"pp_schedule": "1f1b", "pp_microbatch_size": 1}}}


def client(fake) -> WebClient:
    return WebClient(token="xoxb-test-token", base_url=fake.url)


def test_a_valid_layout_is_uploaded_into_the_thread(fake_slack):
    report = validate(TP_PP, world_size=64, recipe_checks=False)
    assert attach_mesh(client(fake_slack), Uploads(), channel="C1", thread_ts="1700000001.000100", report=report,
                       lang="en", comment="the mesh")
    [done] = fake_slack.posts("files.completeUploadExternal")
    assert done["channel_id"] == "C1" and done["thread_ts"] == "1700000001.000100"
    assert done["initial_comment"] == "the mesh"
    [f] = json.loads(done["files"])
    assert fake_slack.uploads[f["id"]].startswith(PNG_MAGIC)
    [asked] = fake_slack.posts("files.getUploadURLExternal")
    assert asked["filename"] == "mesh-fsdp2-64-pp4-dp_shard2-tp8.png"


def test_an_invalid_config_uploads_nothing(fake_slack):
    report = validate(TP_PP, world_size=48, recipe_checks=False)
    assert not report.ok
    assert not attach_mesh(client(fake_slack), Uploads(), channel="C1", report=report, lang="en")
    assert not fake_slack.posts("files.getUploadURLExternal")


def test_missing_scope_turns_uploads_off_and_the_next_reply_does_not_try(fake_slack):
    fake_slack.upload_error = "missing_scope"
    uploads = Uploads()
    report = validate(TP_PP, world_size=64, recipe_checks=False)
    assert not attach_mesh(client(fake_slack), uploads, channel="C1", report=report, lang="zh")
    assert uploads.enabled is False
    assert not attach_mesh(client(fake_slack), uploads, channel="C1", report=report, lang="zh")
    assert len(fake_slack.posts("files.getUploadURLExternal")) == 1


def test_a_channel_error_costs_one_picture_only(fake_slack):
    fake_slack.upload_error = "not_in_channel"
    uploads = Uploads()
    report = validate(TP_PP, world_size=64, recipe_checks=False)
    assert not attach_mesh(client(fake_slack), uploads, channel="C9", report=report, lang="en")
    assert uploads.enabled is True
