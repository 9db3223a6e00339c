"""Notifications per person (issue 38): a mail server's URL tagged `people` in PAYFLOW_NOTIFY
mails each operator at the address an admin keeps in the ledger: a batch waiting for approval
to each checker but its maker, its unpaid rows to its maker; operations' messages go only to
URLs tagged for them. Delivered to a real SMTP server and a JSON sink on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from paying_support import register, row
from support.operators import PASSWORD, actor, add_people, sign_in_at
from support.receivers import JsonSink, SmtpSink, mail_text
from support.waiting import wait_until

from payflow.acts import submit
from payflow.console.operators import add_operator, operator_named, set_notify_to
from payflow.notices import approval_needed, findings_opened, unpaid_rows
from payflow.notify import send
from payflow.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def people_mail(smtp: SmtpSink) -> str:
    """The SMTP sink's URL as a mail server for people only: no `to` of its own."""
    return f"people=mailto://127.0.0.1:{smtp.port}?from=payflow@example.com&mode=insecure"


def test_checkers_but_the_maker_are_mailed_a_waiting_batch_and_the_maker_its_unpaid_rows(ledger):
    add_people(ledger, mia="maker,checker", bob="checker", carl="checker", dan="checker")
    for name in ("mia", "bob", "carl"):  # dan has no address: told through no one
        set_notify_to(ledger, name, f"{name}@example.com")
    batch_id = register(ledger, [row("np-1", 2), row("np-2", 3)])
    submit(ledger, batch_id, actor(ledger, "mia"))
    smtp, ops = SmtpSink(), JsonSink()
    try:
        settings = Settings(notify=[people_mail(smtp), f"operations={ops.url}"])

        assert send(settings, approval_needed(ledger, batch_id, 1, 7200)) is True
        mails = wait_until(lambda: smtp.mails if len(smtp.mails) == 2 else None, what="2 mails")
        assert sorted(m["To"] for m in mails) == ["bob@example.com", "carl@example.com"]
        assert mail_text(mails[0]).splitlines() == [
            f"payflow: approval needed: batch {batch_id}",
            f"Batch {batch_id} waits for approval by 1 person.",
            "2 payouts to send (35 XOF), of 2 rows",
            "The approval expires in 2.0 h.",
            f"Next: payflow approve {batch_id} (or the console page /batches/{batch_id}/approve)",
            "(for checkers)",
        ]

        smtp.mails.clear()
        assert send(settings, unpaid_rows(ledger, batch_id)) is True
        [to_maker] = wait_until(lambda: smtp.mails, what="the maker's mail")
        assert to_maker["To"] == "mia@example.com"
        assert f"payflow: finished with unpaid rows: batch {batch_id}" in mail_text(to_maker)
        assert f"Next: payflow status {batch_id}" in mail_text(to_maker)

        # A finding is operations': their URL gets it, nobody's own mailbox does.
        smtp.mails.clear()
        assert send(settings, findings_opened(batch_id, 1, 1)) is True
        [finding] = wait_until(lambda: ops.bodies, what="the operations' message")
        assert finding["message"].splitlines() == [
            f"Reconciliation of batch {batch_id} opened 1 finding; 1 finding open now.",
            f"Next: payflow findings {batch_id}",
            "(for operators)",
        ]
        assert smtp.mails == [] and len(ops.bodies) == 1
    finally:
        smtp.close()
        ops.close()


def test_an_admin_sets_an_operators_address_from_the_command_line_and_a_url_is_refused(
    ledger, tmp_path
):
    add_people(ledger, ada="admin", mia="maker")
    sign_in_at(ledger.url, "ada", tmp_path / "home-ada")
    sign_in_at(ledger.url, "mia", tmp_path / "home-mia")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env["PAYFLOW_LEDGER_URL"] = ledger.url

    def console(home: str, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "payflow", "console", *args],
            env={**env, "PAYFLOW_HOME": str(tmp_path / home)},
            cwd=REPO,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )

    done = console("home-ada", "set-notify", "mia", "mia@example.com")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "operator mia is told at mia@example.com"
    # `payflow console add-user bob --notify-to bob@example.com` does this:
    add_operator(ledger, "bob", "checker", PASSWORD, notify_to="bob@example.com")
    assert operator_named(ledger, "bob").notify_to == "bob@example.com"

    url = console("home-ada", "set-notify", "mia", "mailto://u:secret@mail.example.com")
    assert url.returncode == 2
    assert url.stderr.strip() == (
        "payflow: an operator's address is an e-mail address (name@domain), no URL; nothing was "
        "changed"
    )
    # Only an admin sets it: a maker may not point another person's mail elsewhere.
    maker = console("home-mia", "set-notify", "mia", "evil@example.com")
    assert maker.returncode == 2 and "only an admin" in maker.stderr
    assert operator_named(ledger, "mia").notify_to == "mia@example.com"
