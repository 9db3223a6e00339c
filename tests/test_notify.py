"""PAYFLOW_NOTIFY: one message delivered to a real JSON webhook sink and a real SMTP server on
127.0.0.1, its text checked; a receiver that is down costs one warning line, never an error."""

from __future__ import annotations

import logging

import pytest
from pydantic import ValidationError
from support.receivers import JsonSink, mail_text, receivers
from support.servers import free_port
from support.waiting import wait_until

from payflow.cli.setup import settings_error
from payflow.notify import Event, Notice, batch_notice, send, tell
from payflow.settings import Settings

NOTICE = batch_notice(
    Event.RUN_RESUMED,
    "b-123",
    ["The pay run of batch b-123 died (3 rows unsent).", "Resumed in run r-1."],
    "payflow status b-123",
)


def test_a_notice_reaches_a_json_webhook_and_a_mailbox_with_its_batch_counts_and_command():
    with receivers() as (hook, mail):
        settings = Settings(notify=[hook.url, mail.url])

        assert send(settings, NOTICE) is True

        [body] = wait_until(lambda: hook.bodies, what="the webhook's POST")
        assert body["title"] == "payflow: run crashed and resumed: batch b-123"
        assert body["message"].splitlines() == [
            "The pay run of batch b-123 died (3 rows unsent).",
            "Resumed in run r-1.",
            "Next: payflow status b-123",
            "(for operators)",
        ]
        [got] = wait_until(lambda: mail.mails, what="the mail")
        text = mail_text(got)
        assert "run crashed and resumed: batch b-123" in text
        assert "3 rows unsent" in text and "Next: payflow status b-123" in text


def test_the_setting_takes_urls_separated_by_spaces_or_commas(monkeypatch):
    monkeypatch.setenv("PAYFLOW_NOTIFY", "json://127.0.0.1:1/a, mailto://127.0.0.1:2?to=x@y.z")
    assert Settings().notify == ["json://127.0.0.1:1/a", "mailto://127.0.0.1:2?to=x@y.z"]
    monkeypatch.delenv("PAYFLOW_NOTIFY")
    assert Settings().notify == []


def test_a_receiver_down_is_one_warning_line_and_the_others_still_get_it(caplog):
    down = f"json://127.0.0.1:{free_port()}/nobody"
    with receivers() as (hook, _), caplog.at_level(logging.WARNING):
        assert send(Settings(notify=[down, hook.url]), NOTICE) is False
        assert wait_until(lambda: hook.bodies, what="the live receiver's POST")
    ours = [r for r in caplog.records if r.name == "payflow.notify"]
    assert [r.getMessage() for r in ours] == [
        "notification 'run crashed and resumed' (batch b-123) not delivered to every "
        "receiver of PAYFLOW_NOTIFY"
    ]
    assert not [r for r in caplog.records if r.exc_info]
    # The receiver's address (which may carry a password) is in no line.
    assert "nobody" not in caplog.text


def test_a_notice_that_cannot_be_built_is_a_warning_not_an_error(caplog):
    def broken() -> Notice:
        raise RuntimeError("ledger down")

    with caplog.at_level(logging.WARNING):
        assert tell(Settings(notify=["json://127.0.0.1:1/x"]), broken) is False
    assert "notification not built: RuntimeError" in caplog.text


@pytest.mark.parametrize("event", list(Event))
def test_every_event_names_whom_it_is_for(event):
    assert batch_notice(event, "b", ["x"], "y").body.endswith(")")


def test_each_audience_gets_only_its_messages_and_an_untagged_url_gets_every_one():
    checkers, operations, everyone = JsonSink(), JsonSink(), JsonSink()
    try:
        settings = Settings(
            notify=[f"checkers={checkers.url}", f"operations+makers={operations.url}", everyone.url]
        )
        asked = batch_notice(
            Event.APPROVAL_NEEDED, "b-7", ["Batch b-7 waits."], "payflow approve b-7"
        )
        assert send(settings, asked) is True
        assert send(settings, NOTICE) is True

        wait_until(lambda: len(everyone.bodies) == 2, what="both messages at the untagged URL")
        [to_checkers] = wait_until(lambda: checkers.bodies, what="the checkers' message")
        [to_operations] = wait_until(lambda: operations.bodies, what="the operations' message")
    finally:
        for sink in (checkers, operations, everyone):
            sink.close()
    assert to_checkers["title"] == "payflow: approval needed: batch b-7"
    assert to_checkers["message"].splitlines() == [
        "Batch b-7 waits.",
        "Next: payflow approve b-7",
        "(for checkers)",
    ]
    assert to_operations["title"] == "payflow: run crashed and resumed: batch b-123"
    assert [b["title"] for b in everyone.bodies] == [to_checkers["title"], to_operations["title"]]


def test_a_message_no_receiver_serves_is_nobody_to_tell_not_a_failure(caplog):
    with receivers() as (hook, _), caplog.at_level(logging.WARNING):
        assert send(Settings(notify=[f"checkers={hook.url}"]), NOTICE) is True
    assert hook.bodies == [] and not caplog.records


def test_an_unknown_audience_is_one_line_naming_those_allowed_never_the_url(monkeypatch):
    monkeypatch.setenv("PAYFLOW_NOTIFY", "chekers=json://user:secret@127.0.0.1:1/a")
    with pytest.raises(ValidationError) as refused:
        Settings()
    assert settings_error(refused.value) == (
        "bad setting PAYFLOW_NOTIFY: unknown audience chekers before '=': use checkers, makers, "
        "operations, people, joined with '+'"
    )
