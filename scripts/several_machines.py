"""Several machines on one: each "machine" a process of its own with its own PAYFLOW_HOME and
PREFECT_HOME, sharing only what docs/deployments/several-machines.md says they share: the
PostgreSQL ledger, the reports' storage (`s3://`) and the Prefect server.

    .venv/bin/python scripts/several_machines.py --root /tmp/machines \\
        --ledger-url postgresql+psycopg://USER:PASS@DBHOST/payflow \\
        --prefect-api-url http://SERVER:4200/api \\
        --reports-url s3://BUCKET/reports --inbox-url s3://BUCKET/inbox [--quick]

Started: the payments service (a `payflow sandbox` process unless --api-url; its token from
PAYFLOW_API_TOKEN), webhook receivers behind a round-robin load balancer that checks each
receiver's `/health`, `prefect deploy --all`, process workers and the console. It prints which
settings each machine got (names only). --quick then pays one batch end to end, as a maker and a
checker do in the console, checks it was paid once and that the console serves its report from
the storage, and stops everything; without it, everything runs until Ctrl-C.

S3's endpoint and keys come from the standard AWS_* settings of this process, handed to the
machines that read the storage (workers, console). Nothing secret is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import io
import itertools
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager, suppress
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
PAYFLOW, PREFECT = str(BIN / "payflow"), str(BIN / "prefect")
POOL = "payflow"  # prefect.yaml's work pool
QUICK_ROWS = 3


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


STARTED = time.monotonic()


def said(line: str) -> None:
    """Print `line` with the seconds since the start."""
    print(f"[{time.monotonic() - STARTED:6.1f} s] {line}", flush=True)


def wait_for(what: str, check: Callable[[], Any], timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.3)
    raise SystemExit(f"several-machines: {what} did not happen within {timeout:g} s")


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=3).status_code == 200
    except httpx.HTTPError:
        return False


class Machines:
    """The processes started, each with its environment and log; stopped in reverse."""

    def __init__(self, root: Path, stack: ExitStack) -> None:
        self.root, self.stack = root, stack
        self.settings: dict[str, list[str]] = {}

    def env(self, name: str, settings: dict[str, str]) -> dict[str, str]:
        """`name`'s environment: this process's, less every PAYFLOW_, PREFECT_ and AWS_ setting,
        plus its own homes and `settings` (recorded by name for the summary)."""
        home = self.root / name
        home.mkdir(parents=True, exist_ok=True)
        mine = ("PAYFLOW_", "PREFECT_", "AWS_")
        base = {k: v for k, v in os.environ.items() if not k.startswith(mine)}
        own = {
            "PAYFLOW_HOME": str(home / "payflow"),
            "PREFECT_HOME": str(home / "prefect"),
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            **settings,
        }
        self.settings[name] = sorted(own)
        return {**base, **own}

    def start(self, name: str, args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
        log = (self.root / name / "output.log").open("wb")
        process = subprocess.Popen(  # noqa: S603 (our own commands)
            args,
            cwd=self.root / name,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        log.close()
        self.stack.callback(_stop, process)
        return process

    def run(self, name: str, args: list[str], env: dict[str, str]) -> str:
        done = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True)  # noqa: S603
        if done.returncode != 0:
            raise SystemExit(f"several-machines: {name}: {' '.join(args[1:3])} failed:\n"
                             f"{done.stdout[-2000:]}{done.stderr[-2000:]}")  # fmt: skip
        return done.stdout


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def load_balancer(backends: list[str]) -> Starlette:
    """Round robin over the receivers that answered their `/health` last time (checked every
    second); its own `/health` is 200 while one does. Stands in for your load balancer."""
    healthy = {b: False for b in backends}
    turns = itertools.cycle(backends)
    forwarded: dict[str, int] = dict.fromkeys(backends, 0)

    async def check(client: httpx.AsyncClient) -> None:
        while True:
            for backend in backends:
                try:
                    healthy[backend] = (await client.get(f"{backend}/health")).status_code == 200
                except httpx.HTTPError:
                    healthy[backend] = False
            await asyncio.sleep(1)

    @asynccontextmanager
    async def checking(_: Starlette) -> AsyncIterator[None]:
        # The checks end with the server, not at the interpreter's exit: a thread still making
        # a client there (OpenSSL loading its certificates) crashed the script as it exited.
        async with httpx.AsyncClient(timeout=3) as client:
            task = asyncio.create_task(check(client))
            try:
                yield
            finally:
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task

    async def health(_: Request) -> Response:
        up = [b for b, ok in healthy.items() if ok]
        return Response(f"{len(up)} of {len(backends)} receivers up\n", 200 if up else 503)

    async def forward(request: Request) -> Response:
        body = await request.body()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host",)}
        for _ in backends:
            backend = next(turns)
            if not healthy[backend]:
                continue
            async with httpx.AsyncClient(timeout=30) as client:
                try:
                    answer = await client.post(f"{backend}/webhooks", content=body, headers=headers)
                except httpx.HTTPError:
                    continue
            forwarded[backend] += 1
            return Response(answer.content, answer.status_code)
        return Response("no receiver up\n", 503)

    async def counts(_: Request) -> Response:
        import json

        return Response(json.dumps(forwarded), media_type="application/json")

    routes = [
        Route("/health", health),
        Route("/webhooks", forward, methods=["POST"]),
        Route("/_lb/forwarded", counts),
    ]
    return Starlette(routes=routes, lifespan=checking)


@contextmanager
def serve_in_thread(app: Starlette, port: int) -> Iterator[None]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True, name="load-balancer")
    thread.start()
    try:
        wait_for("the load balancer", lambda: server.started, 30)
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def bring_up(args: argparse.Namespace, machines: Machines) -> dict[str, str]:
    """Start every machine (at once: each takes seconds to import its libraries), then wait
    until each answers; the URLs of the payments service, load balancer and console."""
    aws = {k: v for k, v in os.environ.items() if k.startswith("AWS_")}
    api_url, token = args.api_url, os.environ.get("PAYFLOW_API_TOKEN", "")
    waits: list[tuple[str, str]] = []
    if api_url is None:  # the payments service: a standalone sandbox of its own
        from payflow.settings import SANDBOX_TOKEN_DEFAULT

        port = free_port()
        api_url, token = f"http://127.0.0.1:{port}", SANDBOX_TOKEN_DEFAULT
        fast = ["--processing-delay", "0.05", "--final-delay", "0.1"] if args.quick else []
        env = machines.env("payments", {})
        machines.start("payments", [PAYFLOW, "sandbox", "--port", str(port), *fast], env)
        waits.append(("the payments sandbox", f"{api_url}/_sandbox/stats"))
    service = {"PAYFLOW_API_URL": api_url, "PAYFLOW_API_TOKEN": token}
    ledger = {"PAYFLOW_LEDGER_URL": args.ledger_url}
    prefect = {"PREFECT_API_URL": args.prefect_api_url}
    reports = {"PAYFLOW_REPORTS_URL": args.reports_url, **aws}

    receivers = []
    for n in range(1, args.receivers + 1):
        port = free_port()
        name = f"receiver-{n}"
        env = machines.env(name, {**ledger, **service})
        machines.start(name, [PAYFLOW, "webhooks", "--port", str(port)], env)
        receivers.append(f"http://127.0.0.1:{port}")
    lb_port = free_port()
    machines.stack.enter_context(serve_in_thread(load_balancer(receivers), lb_port))
    lb = f"http://127.0.0.1:{lb_port}"
    waits.append(("a receiver behind the load balancer", f"{lb}/health"))
    hooks = {"PAYFLOW_WEBHOOK_URL": f"{lb}/webhooks"}

    console_port = free_port()
    env = machines.env("console", {**prefect, **ledger, **service, **hooks, **reports})
    machines.start("console", [PAYFLOW, "console", "--port", str(console_port)], env)
    console = f"http://127.0.0.1:{console_port}"
    waits.append(("the console", f"{console}/login"))

    deployer = machines.env(
        "deployer",
        {**prefect, "PAYFLOW_CHECKOUT": str(REPO), "PAYFLOW_INBOX": args.inbox_url},
    )
    machines.run("deployer", [PREFECT, "work-pool", "create", POOL, "--type", "process",
                              "--overwrite"], deployer)  # fmt: skip
    for n in range(1, args.workers + 1):
        name = f"worker-{n}"
        env = machines.env(name, {**prefect, **ledger, **service, **hooks, **reports})
        env["PREFECT_WORKER_QUERY_SECONDS"] = "1" if args.quick else "10"
        machines.start(name, [PREFECT, "worker", "start", "--pool", POOL, "--name", name], env)
    machines.run("deployer", [PREFECT, "--no-prompt", "deploy", "--all"], deployer)
    said("deployed prefect.yaml's deployments")
    for what, url in waits:
        wait_for(what, lambda url=url: answers(url), 180)
        said(f"{what} answers")
    return {"payments": api_url, "load balancer": lb, "console": console}


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', html)
    if not found:
        raise SystemExit("several-machines: a console page had no form")
    return found.group(1)


def signed_in(console: str, name: str, password: str) -> httpx.Client:
    client = httpx.Client(base_url=console, timeout=60)
    page = client.get("/login")
    data = {"csrf": csrf_of(page.text), "name": name, "password": password}
    if client.post("/login", data=data).status_code != 303:
        raise SystemExit(f"several-machines: {name} could not sign in to the console")
    return client


def quick_batch(args: argparse.Namespace, urls: dict[str, str]) -> None:
    """One batch through the set-up: a maker uploads it in the console, a checker approves it
    there, a worker pays it; then each payout was created once and the console serves the
    batch's report, which the worker wrote to the storage."""
    from payflow.console.operators import add_operator, operator_named
    from payflow.ledger import Ledger

    password = secrets.token_urlsafe(18)  # the demo operators' own, never printed
    tag = secrets.token_hex(3)
    maker, checker = f"maker-{tag}", f"checker-{tag}"
    with Ledger.open(args.ledger_url) as ledger:
        for name, role in ((maker, "maker"), (checker, "checker")):
            if operator_named(ledger, name) is None:
                add_operator(ledger, name, role, password)
    ids = [f"machines-{tag}-{n}" for n in range(1, QUICK_ROWS + 1)]
    lines = "".join(
        # A new person per row and run: the same person paid the same amount lately is held.
        f"{e},{1000 + 5 * n},XOF,SIM,22507{int(tag, 16) % 10**4:04d}{n:04d},Awa {tag} {n},"
        f"u-{tag}-{n}\n"
        for n, e in enumerate(ids, start=1)
    )
    body = "externalId,amount,currency,paymentType,requisites,name,userId\n" + lines
    console = urls["console"]
    as_maker = signed_in(console, maker, password)
    posted = as_maker.post(
        "/upload",
        files={"file": (f"machines-{tag}.csv", body.encode())},
        data={"csrf": csrf_of(as_maker.get("/upload").text)},
    )
    batch_id = posted.headers["location"].rstrip("/").rpartition("/")[2]
    page = as_maker.get(f"/batches/{batch_id}").text
    as_maker.post(f"/batches/{batch_id}/submit", data={"csrf": csrf_of(page)})
    as_checker = signed_in(console, checker, password)
    form = as_checker.get(f"/batches/{batch_id}/approve").text
    approved = as_checker.post(
        f"/batches/{batch_id}/approve", data={"csrf": csrf_of(form), "decision": "approve"}
    )
    if approved.status_code != 303:
        page = " ".join(re.sub(r"<[^>]+>", " ", approved.text.partition("<main")[2]).split())
        raise SystemExit(f"several-machines: the approval was refused: {page[:400]}")
    said(f"batch {batch_id}: uploaded by {maker}, approved by {checker} in the console")

    def paid() -> bool:
        with Ledger.open(args.ledger_url) as ledger:
            versions = ledger.report_versions(batch_id)
            counts = ledger.batch_counts(batch_id).by_state
        return counts.get("COMPLETED", 0) == QUICK_ROWS and bool(versions)

    wait_for("the batch paid and its report kept", paid, args.pay_timeout)
    said("paid; its report kept")
    stats = httpx.get(f"{urls['payments']}/_sandbox/stats", timeout=30).json()
    created = {e: stats["payoutsByExternalId"].get(e, 0) for e in ids}
    if set(created.values()) != {1}:
        raise SystemExit(f"several-machines: payouts created per externalId: {created}")
    with Ledger.open(args.ledger_url) as ledger:
        version = ledger.report_versions(batch_id)[0]  # newest first
    if not version.csv_path.startswith(args.reports_url.rstrip("/") + "/"):
        raise SystemExit(f"several-machines: the report went to {version.csv_path}")
    served = as_checker.get(f"/batches/{batch_id}/reports/{version.id}.csv")
    rows = list(csv.DictReader(io.StringIO(served.content.decode("utf-8-sig"))))
    outcomes = {r["external_id"]: r["outcome"] for r in rows}
    if served.status_code != 200 or outcomes != dict.fromkeys(ids, "paid"):
        raise SystemExit(f"several-machines: the console served {served.status_code} {outcomes}")
    forwarded = httpx.get(f"{urls['load balancer']}/_lb/forwarded", timeout=10).json()
    print(f"paid once each: {', '.join(ids)}")
    print(f"report {version.csv_path} served by the console ({len(rows)} rows)")
    print(f"webhooks through the load balancer: {sum(forwarded.values())} ({forwarded})")
    print(f"QUICK CHECK PASSED batch={batch_id}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, required=True, help="each machine's folder")
    parser.add_argument("--ledger-url", required=True, help="the shared PostgreSQL ledger")
    parser.add_argument("--prefect-api-url", required=True, help="the shared Prefect server")
    parser.add_argument("--reports-url", required=True, help="s3://bucket/prefix of reports")
    parser.add_argument("--inbox-url", required=True, help="s3://bucket/prefix of the inbox")
    parser.add_argument("--api-url", help="the payments API (token: PAYFLOW_API_TOKEN); unset: "
                        "a standalone sandbox")  # fmt: skip
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--receivers", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="pay one batch, check, stop")
    parser.add_argument("--pay-timeout", type=float, default=180)
    args = parser.parse_args(argv)
    if not args.ledger_url.startswith("postgresql"):
        parser.error("--ledger-url: several machines share a PostgreSQL ledger")
    args.root.mkdir(parents=True, exist_ok=True)
    # SIGTERM (a test's timeout, a service manager) stops every machine as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with ExitStack() as stack:
        machines = Machines(args.root, stack)
        urls = bring_up(args, machines)
        for name, settings in machines.settings.items():
            print(f"{name} settings: {' '.join(settings)}")
        for name, url in urls.items():
            print(f"{name}: {url}")
        if args.quick:
            quick_batch(args, urls)
            return 0
        print("running; Ctrl-C stops every machine")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
