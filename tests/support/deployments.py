"""A deployed payflow on real servers for end-to-end tests: a Prefect server on PostgreSQL
started here, `prefect deploy --all` from prefect.yaml, process workers, a `payflow sandbox`
process and a PostgreSQL ledger; and what those tests do with it (batch files, runs by tag,
killing a worker with its run)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import psycopg
from prefect.client.schemas.actions import DeploymentFlowRunCreate
from prefect.states import Scheduled, to_state_create

from payflow.acts import submit as submit_batch
from payflow.intake import batch_id_of
from payflow.ledger import Ledger
from payflow.settings import SANDBOX_TOKEN_DEFAULT
from support.operators import actor, add_people, set_ledger_policy, sign_in_at
from support.postgres import fresh_postgres_database
from support.prefect import prefect_server_on_postgres
from support.servers import answers, free_port, start_group, stop_group
from support.tracking import TRACK_QUIET_PERIOD
from support.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PREFECT, PAYFLOW = [str(BIN / "prefect")], [str(BIN / "payflow")]
FAST_SANDBOX = ["--processing-delay", "0.05", "--final-delay", "0.1"]
HEADER = "externalId,amount,currency,paymentType,requisites,name,userId\n"
POLICY = 'currencies:\n  "*":\n    bands:\n      - {steps: 1}\n    expiry_hours: 24\n'
# What a worker's own approvals file says (nothing needs approval): it must decide nothing.
NO_STEPS = 'currencies:\n  "*":\n    bands:\n      - {steps: 0}\n    expiry_hours: 24\n'
MAKER, APPROVER = "maker-e2e", "checker-e2e"
SANDBOX_OUTCOME_SUFFIXES = {"1111", "2222", "3333", "4444", "5555", "6666"}
# The heartbeats' window of every process of the stack (PAYFLOW_RUN_STALE_AFTER): a killed run
# reads dead after it, not after the minute of the default, and live runs beat every 2.5 s.
RUN_WINDOW = timedelta(seconds=15)


# Server services these tests do not use, off: each one loops on the server's CPU (and its
# PostgreSQL's) for the whole module. Kept on: the task-run recorder (subflows' parent
# task runs, which `payflow approve` reads), pause expirations, cancellation clean-up and the
# repossessor (concurrency slots of killed runs), which the behaviour under test may rely on.
UNUSED_SERVICES = {
    # Runs are started by hand here; the cron and interval schedules are checked as data.
    "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED": "false",
    # Marks scheduled runs Late: these runs are started by hand and taken within seconds.
    "PREFECT_SERVER_SERVICES_LATE_RUNS_ENABLED": "false",
    # Marks silent workers and pools offline: no test reads a worker's status.
    "PREFECT_SERVER_SERVICES_FOREMAN_ENABLED": "false",
    # Automations: none is deployed. Stored events: nothing here reads them (logs and states
    # have their own endpoints).
    "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
    "PREFECT_SERVER_SERVICES_EVENT_PERSISTER_ENABLED": "false",
}


def wait_for(what: str, check: Callable[[], Any], timeout: float = 150) -> Any:
    """Poll `check` every half second until it returns something truthy."""
    return wait_until(check, what=what, timeout=timeout, interval=0.5)


@dataclass
class Stack:
    root: Path
    prefect_url: str
    sandbox_url: str
    ledger_url: str
    inbox: Path
    reports: Path
    env: dict[str, str]
    worker_logs: dict[str, Path] = field(default_factory=dict)
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    running: ExitStack = field(default_factory=ExitStack)  # stops what the stack started
    # One client for every request of the module: `httpx.request` made a client, with its TLS
    # context, per call (about 30 ms of CPU), twice a second in each wait.
    http: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=30))

    def api(self, method: str, path: str, body: Any = None) -> Any:
        response = self.http.request(method, f"{self.prefect_url}{path}", json=body)
        response.raise_for_status()
        return response.json()

    def runs(self, *, tags: list[str], flow: str | None = None, state: str | None = None) -> list:
        body: dict[str, Any] = {"flow_runs": {"tags": {"all_": tags}}}
        if state:
            body["flow_runs"]["state"] = {"type": {"any_": [state]}}
        if flow:
            body["flows"] = {"name": {"any_": [flow]}}
        return list(self.api("POST", "/flow_runs/filter", body))

    def state_of(self, run_id: str) -> str:
        return str(self.api("GET", f"/flow_runs/{run_id}")["state"]["type"])

    def cli(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            args, cwd=REPO, env={**self.env, **(env or {})}, capture_output=True, text=True
        )
        assert done.returncode == 0, f"{args}: {done.stdout}\n{done.stderr}"
        return done.stdout

    def deployment_run(self, name: str, *args: str) -> str:
        """What `prefect deployment run NAME [-p key=value]... [--tag TAG]...` does, through the
        API from this process (the run's id): the command is set-up here, not what is tested,
        and each one cost seconds of CPU importing Prefect."""
        parameters: dict[str, Any] = {}
        tags: list[str] = []
        for option, value in zip(args[::2], args[1::2], strict=True):
            if option in ("-p", "--param"):
                key, _, text = value.partition("=")
                try:  # as the command reads a value: JSON, else the text itself
                    parameters[key] = json.loads(text)
                except ValueError:
                    parameters[key] = text
            else:
                assert option == "--tag", f"deployment_run: {option} is not handled here"
                tags.append(value)
        deployment = self.api("GET", f"/deployments/name/{name}")
        # The command's own request: Scheduled now, its tags and parameters, nothing else.
        run = DeploymentFlowRunCreate(
            parameters=parameters, state=to_state_create(Scheduled()), tags=tags
        )
        body = run.model_dump(mode="json", exclude_unset=True)
        made = self.api("POST", f"/deployments/{deployment['id']}/create_flow_run", body)
        return str(made["id"])

    def person(self, name: str) -> dict[str, str]:
        """The environment of `name`, signed in (`payflow login`) under their own home."""
        home = self.root / f"home-of-{name}"
        sign_in_at(self.ledger_url, name, home)
        return {"PAYFLOW_HOME": str(home)}

    def approve(self, batch_id: str, *, submit: bool = True) -> dict[str, Any]:
        """The maker submits the batch a deployed run registered with no signed-in maker (its
        file is the worker's account's), then the checker approves it. The submit is the act
        `payflow submit` calls, in this process: set-up for the approval, which is what these
        tests check (the command itself runs in the rerun and watchdog tests)."""
        if submit:
            with Ledger.open(self.ledger_url) as ledger:
                submit_batch(ledger, batch_id, actor(ledger, MAKER))
        out = self.cli(*PAYFLOW, "approve", batch_id, "--json", env=self.person(APPROVER))
        return dict(json.loads(out.strip().splitlines()[-1]))

    def sandbox_stats(self) -> dict[str, Any]:
        return dict(self.http.get(f"{self.sandbox_url}/_sandbox/stats").json())

    def ledger(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.ledger_url.replace("+psycopg", ""), autocommit=True) as db:
            return list(db.execute(sql, params).fetchall())


def start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return start_group(args, env, log, cwd=REPO)


@contextmanager
def deployed_stack(
    root: Path, workers: Sequence[str] = ("worker-a", "worker-b"), **more_env: str
) -> Iterator[Stack]:
    """A Prefect server on PostgreSQL with every deployment of prefect.yaml, a `payflow sandbox`
    process, a PostgreSQL ledger and a process worker by each name of `workers`; `more_env` joins
    the environment of the workers and of `Stack.cli` (PAYFLOW_NOTIFY, say)."""
    (root / "approvals.yaml").write_text(NO_STEPS, encoding="utf-8")
    with ExitStack() as running:  # left in reverse: workers, sandbox, ledger, Prefect server
        prefect_url = running.enter_context(prefect_server_on_postgres(root, **UNUSED_SERVICES))
        ledger_url = running.enter_context(fresh_postgres_database("payflow_e2e"))
        with Ledger.open(ledger_url) as ledger:  # the policy and the people: ledger data
            set_ledger_policy(ledger, POLICY)
            add_people(ledger, **{MAKER: "maker", APPROVER: "checker"})
        sandbox_port = free_port()
        sandbox_url = f"http://127.0.0.1:{sandbox_port}"
        base = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "PAYFLOW_"))}
        env = {
            **base,
            "PREFECT_HOME": str(root / "prefect-home"),
            "PREFECT_API_URL": prefect_url,
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PAYFLOW_API_URL": sandbox_url,
            "PAYFLOW_API_TOKEN": SANDBOX_TOKEN_DEFAULT,
            "PAYFLOW_LEDGER_URL": ledger_url,
            "PAYFLOW_HOME": str(root / "home"),
            "PAYFLOW_APPROVALS_FILE": str(root / "approvals.yaml"),
            "PAYFLOW_CHECKOUT": str(REPO),
            "PAYFLOW_INBOX": str(root / "inbox"),
            "PAYFLOW_USER": APPROVER,  # names nobody: a worker's or a maker's claim counts not
            # Small claims, a few requests in flight and quick polls: two runs of one batch overlap.
            "PAYFLOW_CHUNK_SIZE": "100",
            "PAYFLOW_MAX_IN_FLIGHT": "4",
            "PAYFLOW_POLL_INTERVAL": "0.5",
            "PAYFLOW_POLL_MAX_INTERVAL": "2",
            "PAYFLOW_TRACK_QUIET_PERIOD": TRACK_QUIET_PERIOD,  # why: support.tracking
            "PAYFLOW_RUN_STALE_AFTER": str(RUN_WINDOW.total_seconds()),
            **more_env,
        }
        reports = root / "home" / "reports"
        stack = Stack(root, prefect_url, sandbox_url, ledger_url, root / "inbox", reports, env)
        stack.running = running
        running.callback(stack.http.close)
        sandbox = [*PAYFLOW, "sandbox", "--port", str(sandbox_port), *FAST_SANDBOX]
        running.callback(stop_group, start(sandbox, env, root / "sandbox.log"))
        wait_for("the sandbox", lambda: answers(f"{sandbox_url}/_sandbox/stats"), timeout=60)
        stack.cli(*PREFECT, "work-pool", "create", "payflow", "--type", "process")
        stack.cli(*PREFECT, "--no-prompt", "deploy", "--all")
        for name in workers:
            start_worker(stack, name, root / f"{name}.log")
        yield stack


def start_worker(stack: Stack, name: str, log: Path) -> None:
    """A process worker of the `payflow` pool taking one flow run at a time."""
    stack.worker_logs[name] = log
    worker = [*PREFECT, "worker", "start", "--pool", "payflow", "--name", name, "--limit", "1"]
    process = start(worker, {**stack.env, "PREFECT_WORKER_QUERY_SECONDS": "1"}, log)
    stack.workers[name] = process
    stack.running.callback(stop_group, process)


def batch_file(path: Path, prefix: str, rows: int, first: int) -> tuple[str, list[str]]:
    """A valid XOF mobile-money batch; requisites avoid the sandbox's failing suffixes."""
    ids, lines, n = [], [], first
    while len(ids) < rows:
        phone = f"22507{n:08d}"
        n += 1
        if phone[-4:] in SANDBOX_OUTCOME_SUFFIXES:
            continue
        ids.append(f"{prefix}-{len(ids) + 1}")
        # One person per row (name and userId by the phone): the same person paid the same
        # amount by another batch of the stack is a repeat, held (invariant 11).
        lines.append(f"{ids[-1]},{1000 + 5 * len(ids)},XOF,SIM,{phone},Kouadio Yao {n},u-{n}\n")
    path.write_text(HEADER + "".join(lines), encoding="utf-8")
    return batch_id_of(path.read_bytes()), ids


def pay_runs(stack: Stack, batch_id: str, state: str | None = None) -> list:
    return stack.runs(tags=[f"batch:{batch_id}"], flow="pay-batch", state=state)


def paused(stack: Stack, batch_id: str) -> list:
    return stack.runs(tags=[f"batch:{batch_id}"], state="PAUSED")


def final(stack: Stack, run_id: str) -> str | None:
    state = stack.state_of(run_id)
    return state if state in {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"} else None


def set_latency(stack: Stack, seconds: float) -> None:
    url = f"{stack.sandbox_url}/_sandbox/faults"
    stack.http.post(url, json={"latency": seconds}).raise_for_status()


def worker_of_run(stack: Stack) -> dict[str, str]:
    """flow run id -> the worker that ran it, from the workers' own logs."""
    owners = {}
    for name, log in stack.worker_logs.items():
        for run_id in re.findall(r"submitting flow run '([0-9a-f-]{36})'", log.read_text()):
            owners[run_id] = name
    return owners


def kill_worker_and_its_run(stack: Stack, run_id: str) -> str:
    """SIGKILL the worker that took the run and the run's own process (a session of its own),
    as a machine going down would; the worker's name."""
    owner = wait_for("the run's worker", lambda: worker_of_run(stack).get(run_id))
    killed = stack.workers[owner]
    # Two runs may share a worker (seen in a full run on a loaded machine: ProcessLookupError),
    # killed already with the first; each run lives in a session of its own, killed below.
    if killed.poll() is None:
        os.killpg(killed.pid, signal.SIGKILL)
        killed.wait(timeout=30)
    flow_pid = stack.api("GET", f"/flow_runs/{run_id}")["infrastructure_pid"]
    os.kill(int(str(flow_pid).rpartition(":")[2]), signal.SIGKILL)
    return str(owner)
