"""A console on 127.0.0.1 over a fresh SQLite ledger and a sandbox, with a maker and a checker."""

from __future__ import annotations

import io
import re
import subprocess
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import httpx
import openpyxl
import uvicorn
from support.beats import at_past

from payflow.api import AsyncPayoutsClient
from payflow.approvals import record_decision
from payflow.connections import RunTarget, with_client
from payflow.console.app import create_app
from payflow.console.context import ConsoleContext
from payflow.console.operators import add_operator
from payflow.console.paying import IN_PROCESS, is_paying
from payflow.ledger import Ledger
from payflow.ledger.actions import actions_of, record_action
from payflow.model import PayoutInstruction
from payflow.paying import submit_batch, track_batch
from payflow.paying.requests import build_payout_request
from payflow.serving import ThreadedServer
from payflow.settings import Settings

PASSWORD = "correct horse battery"
HEADER = "externalId,amount,currency,paymentType,requisites,name,userId\n"
# Requisites ending 1111/2222 fail at the sandbox; the rest complete.
CLEAN_ROWS = [
    ("c-ok-1", "1500", "KES", "SIM", "254712340001", "Wanjiru Kamau", "u-1"),
    ("c-ok-2", "2500", "KES", "SIM", "254712340002", "Otieno Achieng", "u-2"),
    ("c-bad-1", "700", "KES", "SIM", "254712342222", "Njeri Wambui", "u-3"),
    ("c-bad-2", "900", "KES", "SIM", "254712352222", "Kiprop Kibet", "u-4"),
    ("c-blk-1", "1100", "KES", "SIM", "254712341111", "Mutua Musyoka", "u-5"),
]
ERROR_ROWS = [
    ("e-1", "", "KES", "SIM", "254712349001", "A", "u-1"),
    ("e-2", "0", "KES", "SIM", "254712349002", "B", "u-2"),
    ("e-3", "100", "XYZ", "SIM", "254712349003", "C", "u-3"),
    ("e-4", "100", "KES", "SIM", "254712349004", "D", "u-4"),
]


def workbook(sheets: dict[str, list[tuple[str, ...]]]) -> bytes:
    """An XLSX whose sheets hold these rows (each under the batch header when it has rows)."""
    book = openpyxl.Workbook()
    book.remove(book.active)  # type: ignore[arg-type]
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        sheet.append(HEADER.strip().split(",") if rows else ["notes"])
        for row in rows:
            sheet.append(list(row))
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def batch_csv(rows: list[tuple[str, ...]]) -> bytes:
    """A batch file's bytes."""
    return (HEADER + "".join(",".join(r) + "\n" for r in rows)).encode()


@dataclass
class Console:
    """A running console: its URL and context."""

    url: str
    ctx: ConsoleContext
    server: ThreadedServer


def start_console(
    tmp_path: Path,
    sandbox_url: str,
    *,
    max_upload_bytes: int = 10 * 1024 * 1024,
    prefect_api_url: str | None = None,
    ledger_url: str | None = None,
    sandbox: bool = True,
    reports_url: str | None = None,
) -> Console:
    """Open the ledger (a new SQLite one unless given), add `mia` (maker) and `carl` (checker),
    serve the console (its reports under its home, or at `reports_url`)."""
    ledger_url = ledger_url or f"sqlite:///{tmp_path / 'ledger.db'}"
    settings = Settings(ledger_url=ledger_url, home=tmp_path / "home", reports_url=reports_url)
    ledger = Ledger.open(ledger_url)
    add_operator(ledger, "mia", "maker", PASSWORD)
    add_operator(ledger, "carl", "checker", PASSWORD)
    add_operator(ledger, "mark", "maker", PASSWORD)
    ctx = ConsoleContext(
        settings,
        ledger,
        RunTarget(sandbox_url, ledger_url, sandbox, None),
        max_upload_bytes=max_upload_bytes,
        pay_through_prefect=False,
        prefect_api_url=prefect_api_url,
    )
    config = uvicorn.Config(create_app(ctx), host="127.0.0.1", port=0, log_level="warning")
    server = ThreadedServer(config, name="console")
    port = server.start()
    return Console(f"http://127.0.0.1:{port}", ctx, server)


def wait_for_line(path: Path, text: str, process: subprocess.Popen[str]) -> str:
    """The first line of `path` (a started console's output) holding `text`; fails with the
    process's stderr (`path` with the suffix .err) when it exits first."""
    deadline = time.monotonic() + 300  # the console starts Prefect's local server first
    while time.monotonic() < deadline:
        for line in path.read_text(encoding="utf-8").splitlines():
            if text in line:
                return line
        assert process.poll() is None, path.with_suffix(".err").read_text(encoding="utf-8")
        time.sleep(0.2)
    raise AssertionError(f"no {text!r} in {path}")


def csrf_of(html: str) -> str:
    """The CSRF token in a page's forms."""
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    assert found, "no CSRF field in the page"
    return found.group(1)


def upload_clean(client: httpx.Client, name: str, prefix: str) -> str:
    """Upload the clean rows under new externalIds; the batch id the page names."""
    rows = [(f"{prefix}-{ext}", *rest) for ext, *rest in CLEAN_ROWS]
    token = csrf_of(client.get("/upload").text)
    posted = client.post("/upload", files={"file": (name, batch_csv(rows))}, data={"csrf": token})
    assert posted.status_code == 303, posted.text
    page = client.get(posted.headers["location"])
    assert page.status_code == 200, page.text
    found = re.search(r'action="/batches/([0-9a-f]+)/submit"', page.text)
    assert found, "the upload page offers no submit for approval"
    return found.group(1)


def paying_in_a_console(
    console: Console, name: str, prefix: str, *, run: str = IN_PROCESS, ago: float = 0
) -> str:
    """A clean batch mia uploaded and submitted, carl approved, and whose run started `ago`
    seconds back, in a console process or (`run="flow run ..."`) through the deployment
    (what a console leaves before its run ends); the batch id."""
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, name, prefix)
    page = maker.get(f"/batches/{batch_id}").text
    assert maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(page)}).is_redirect
    then = at_past(console.ctx.ledger, ago)
    record_decision(then, batch_id, approver="carl", decision="approve", via="console")
    record_action(then, "carl", "approved", batch_id)
    record_action(then, "carl", "pay_started", batch_id, detail=run)
    return batch_id


def register_rows(ledger: Ledger, batch_id: str, *ids: str) -> str:
    """Register a batch of XOF SIM rows with these externalIds, as the command line would."""
    rows = [
        PayoutInstruction(
            row_number=n,
            external_id=ext,
            amount=Decimal(1000 * n),
            currency="XOF",
            payment_type="SIM",
            requisites=f"22507990{n:02d}000{n}",
            name="Awa Kone",
            user_id=f"u-{n}",
        )
        for n, ext in enumerate(ids, start=2)
    ]
    ledger.register_batch(batch_id, "cli.csv", rows, [])
    return batch_id


def with_client_in_a_thread(
    console: Console, work: Callable[[AsyncPayoutsClient], Awaitable[None]]
) -> None:
    """`with_client` on the console's target, in a thread of its own: a Playwright test's
    thread already runs an event loop."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(with_client, console.ctx.target, work).result()


def pay_with_the_engine(console: Console, batch_id: str) -> None:
    """Send the batch's rows to the sandbox and follow them to their final status with the
    engine itself, as a pay run would (no approval asked, no Prefect)."""
    ledger = console.ctx.ledger

    async def pay(client: AsyncPayoutsClient) -> None:
        await submit_batch(
            client, ledger, batch_id, worker_id="t", chunk_size=50, callback_url=None
        )
        await track_batch(
            client, ledger, batch_id, deadline=60, poll_interval=0.05, quiet_period=0.1
        )

    with_client_in_a_thread(console, pay)
    assert ledger.batch_counts(batch_id).final == ledger.batch_counts(batch_id).rows


def post_only(console: Console, instruction: PayoutInstruction) -> None:
    """POST one payout to the sandbox and record nothing: a run that died before the answer."""

    async def post(client: AsyncPayoutsClient) -> None:
        await client.create_payout(build_payout_request(instruction, callback_url=None))

    with_client_in_a_thread(console, post)


def signed_in(console: Console, name: str) -> httpx.Client:
    """An HTTP client signed in as `name`."""
    client = httpx.Client(base_url=console.url, follow_redirects=False, timeout=60)
    page = client.get("/login")
    response = client.post(
        "/login", data={"csrf": csrf_of(page.text), "name": name, "password": PASSWORD}
    )
    assert response.status_code == 303, response.text
    return client


def approved_and_paid(console: Console, name: str, prefix: str) -> str:
    """A clean batch mia uploads and submits and carl approves here, once its pay run (in this
    console) has recorded its end; the batch id."""
    maker = signed_in(console, "mia")
    batch_id = upload_clean(maker, name, prefix)
    page = maker.get(f"/batches/{batch_id}").text
    assert maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(page)}).is_redirect
    checker = signed_in(console, "carl")
    form = checker.get(f"/batches/{batch_id}/approve").text
    approved = checker.post(
        f"/batches/{batch_id}/approve", data={"csrf": csrf_of(form), "decision": "approve"}
    )
    assert approved.status_code == 303, approved.text
    deadline = time.monotonic() + 240
    ended = {"pay_finished", "pay_failed"}
    # Until the run has written its end and its thread is over (it reads the ledger last).
    while is_paying(batch_id) or not ended & {
        a.action for a in actions_of(console.ctx.ledger, batch_id)
    }:
        assert time.monotonic() < deadline, "the pay run did not end"
        time.sleep(0.5)
    return batch_id
