"""`payflow run` end to end: where the time of a run goes, and its ratio to the bound.

    .venv/bin/python bench/bench_run.py [--rows 1000[,5000,20000]] [--prefect temporary|server]
        [--in-flight 32] [--latency 0.05] [--no-webhooks] [--quick-checks] [--reconcile]
        [--reconcile-in-flight 32[,64,128]]

Each size runs `payflow run FILE --yes --json` as an operator would, in its own process, with a
fresh PAYFLOW_HOME (ledger, logs, reports) and the settings of a real deployment: the sandbox in
its own process (`payflow sandbox --latency L`) at PAYFLOW_API_URL, a webhook receiver in its
own process (`payflow webhooks`) at PAYFLOW_WEBHOOK_URL, PAYFLOW_MAX_IN_FLIGHT=32, and a
signed-in maker whose ledger's policy asks for no approval (the bench times paying, not
waiting). With
`--prefect server` a Prefect server is started once beforehand and reused through PREFECT_API_URL;
with `temporary` (the default) every run starts its own, as `payflow run` does with no
PREFECT_API_URL.

Phases come from the run's log file (Prefect's "Finished in state" line of each task run, with
the process start as time zero) and the ledger's status_events (first SUBMITTING, last
submit, last final status). The bound of a run is rows / (in_flight / latency) plus the
sandbox's processing and final delays: no run can finish sooner. After the sizes, a run of the
last file again (nothing left to pay) gives the fixed cost of a run.

Each run also prints the CPU seconds each process used while it ran (the run from its rusage,
less what the temporary Prefect server it started used, printed apart; the sandbox, the webhook
receiver and a running Prefect server from /proc) and their sum spread over the cores: no run
can be shorter than that on this machine, whatever the bound says. The run's CPU per row is the
run process's own.

`--quick-checks` also times `payflow --help` and `payflow validate` of 300 rows, and counts the
modules `payflow --help` imports. `--reconcile` times, after each size, what the scheduled
reconciliation does (`payflow reconcile BATCH`: every payout re-fetched); the run itself reads
the ledger and re-fetches none. `--reconcile-in-flight 32,64,128` reconciles the batch once at
each of those PAYFLOW_RECONCILE_CONCURRENCY values, on the same sandbox, with the sandbox's CPU
beside the reconciliation's: what more in flight buys, and where the cores run out. Asserts
nothing: on a shared machine this is a measurement, not a test; print `uptime` beside every
figure.

`--py-spy FOLDER` runs each `payflow run` (and `payflow reconcile`) under `py-spy record`
(py-spy on PATH: `pip install py-spy`, not a payflow dependency), every thread and child
process (the temporary Prefect server) sampled, and leaves each run's folded stacks (`--format
raw`, one line per stack with its samples) in FOLDER; the CPU printed for the run then includes
py-spy's own and its server's.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
PAYFLOW = [sys.executable, "-m", "payflow"]
TOKEN = "sandbox-secret-token"  # payflow.settings.SANDBOX_TOKEN_DEFAULT, without importing it
HEADER = "externalId,amount,currency,paymentType,requisites,bankName,name,userId\n"
SPECIAL_ENDINGS = {"0000", "1111", "2222", "3333", "4444", "5555", "6666"}
LOG_LINE = re.compile(
    r"^(?P<date>\S+ \S+),(?P<ms>\d{3}) INFO prefect\.(?P<kind>task|flow)_runs: (?P<message>.*)$"
)
BEGIN_FLOW = re.compile(r"Beginning flow run '.*' for flow '(?P<flow>[a-z-]+)'")
# The intake flow's tasks end in this order (flows/intake_batch.py); the log does not name them.
INTAKE_TASKS = ("read", "services", "banks", "validate", "register", "count")


def load() -> str:
    """The load averages, as `uptime` prints them."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def machine() -> str:
    """One line about this machine: cores, CPU model, memory, Python."""
    model = "unknown CPU"
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    memory = Path("/proc/meminfo").read_text().splitlines()[0].split()[1]
    return (
        f"{os.cpu_count()} cores ({model}), {int(memory) // 1024**2} GiB, "
        f"Python {sys.version.split()[0]}"
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _ending(n: int) -> int:
    """n, moved on until its last four digits ask the sandbox for nothing but COMPLETED."""
    while f"{n:04d}"[-4:] in SPECIAL_ENDINGS:
        n += 1
    return n


def write_batch(path: Path, rows: int, prefix: str) -> None:
    """A mixed batch that all completes: SIM XOF, BANK_ACCOUNT RUB, SBP RUB (phones repeat,
    each time with another amount: one recipient paid the same amount twice in a file waits
    for a second person, and the run would time nothing but that wait)."""
    sys.path.insert(0, str(ROOT))
    from payflow.schemas.requisites import account_with_key

    bik = "044525225"
    phones = max(1, rows // 20)  # an SBP recipient is paid about twice a batch
    with path.open("w", encoding="utf-8") as handle:
        handle.write(HEADER)
        for n in range(rows):
            kind = n % 10
            if kind < 4:
                wallet = f"2250{_ending(7_000_000 + n):07d}"
                line = f"{prefix}-{n},{5 * (n % 300 + 1)},XOF,SIM,{wallet},,Kouadio Yao,u{n}"
            elif kind < 7:
                account = account_with_key(bik, f"40817810{_ending(n):012d}")
                line = f"{prefix}-{n},{n % 9000 + 1}.50,RUB,BANK_ACCOUNT,{account},,Piotr,u{n}"
            else:
                phone = f"79{_ending(100_000_000 + n % phones):09d}"
                cents = (n // phones) % 100  # the same phone comes back every `phones` rows
                amount = f"{n % 700 + 10}.{cents:02d}"
                line = f"{prefix}-{n},{amount},RUB,SBP,{phone},100000000111,Ivan,u{n}"
            handle.write(line + "\n")


# The servers running now, by role, so each run can say how much CPU each of them used.
SERVERS: dict[str, subprocess.Popen[bytes]] = {}
CORES = os.cpu_count() or 1


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a live process has used, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def serve(
    command: list[str], env: dict[str, str], ready_url: str, log: Path, role: str
) -> Iterator[None]:
    """Run a server process until the block ends; returns once `ready_url` answers."""
    with log.open("w") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    SERVERS[role] = process
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(ready_url, timeout=2)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{command[2:4]} did not start; see {log}") from None
                time.sleep(0.2)
        yield
    finally:
        SERVERS.pop(role, None)
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def base_env() -> dict[str, str]:
    """This environment without PAYFLOW_* and PREFECT_* settings of the caller."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}


@dataclass
class RunFigures:
    """What one `payflow run` took, phase by phase (seconds from the process start)."""

    rows: int
    wall: float
    exit_code: int
    load: str
    marks: dict[str, float] = field(default_factory=dict)
    summary: dict[str, object] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds per process in the run
    peak_mb: float = 0.0  # the largest RSS of any finished child so far (this run's, once large)
    said: str = ""  # the run's last line on stderr when it did not pay every row


def _stamp(date: str, ms: str) -> float:
    return datetime.strptime(date, "%Y-%m-%d %H:%M:%S").timestamp() + int(ms) / 1000


def log_marks(log: Path, since: float) -> dict[str, float]:
    """Wall-clock marks from the run's log after `since`: each flow's start and end, and the
    end of each intake task (by position: the log file does not name task runs)."""
    marks: dict[str, float] = {}
    if not log.exists():
        return marks
    flow: str | None = None
    tasks = 0
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        match = LOG_LINE.match(line)
        if not match or _stamp(match["date"], match["ms"]) < since:
            continue
        at = _stamp(match["date"], match["ms"])
        begin = BEGIN_FLOW.search(match["message"])
        if match["kind"] == "flow" and begin:
            flow, tasks = begin["flow"], 0
            marks.setdefault(f"{flow}-begin", at)
        elif match["kind"] == "flow" and "Finished in state" in match["message"] and flow:
            marks[f"{flow}-end"] = at
        elif match["kind"] == "task" and "Finished in state" in match["message"]:
            if flow == "intake-batch" and tasks < len(INTAKE_TASKS):
                marks[INTAKE_TASKS[tasks]] = at
            tasks += 1
    return marks


def ledger_marks(ledger: Path, since: float) -> dict[str, float]:
    """First and last submit event and last final status, from the ledger's status_events."""
    marks: dict[str, float] = {}
    if not ledger.exists():
        return marks
    after = datetime.fromtimestamp(since, UTC).strftime("%Y-%m-%d %H:%M:%S")
    with sqlite3.connect(ledger) as db:
        queries = {
            "submit_first": "SELECT MIN(at) FROM status_events WHERE to_state = 'SUBMITTING'",
            "submit_last": "SELECT MAX(at) FROM status_events WHERE source IN ('submit','resolve')",
            "final_last": "SELECT MAX(at) FROM status_events WHERE to_state IN "
            "('COMPLETED','FAILED','CANCELED','EXPIRED')",
            "webhooks": "SELECT COUNT(*) FROM status_events WHERE source = 'webhook'",
            "polls": "SELECT COUNT(*) FROM status_events WHERE source = 'poll'",
        }
        for name, sql in queries.items():
            sql = sql.replace("WHERE", "WHERE at >= ? AND", 1)
            value = db.execute(sql, (after,)).fetchone()[0]
            if value is None:
                continue
            if isinstance(value, int):
                marks[name] = float(value)
            else:
                # Stored as naive UTC.
                marks[name] = datetime.fromisoformat(str(value)).replace(tzinfo=UTC).timestamp()
    return marks


# The folder `--py-spy` leaves the runs' profiles in (empty: no profiling).
PROFILE: list[Path] = []


def run_once(file: Path, env: dict[str, str], home: Path) -> RunFigures:
    """`payflow run FILE --yes --json` in its own process, timed, with its phases."""
    rows = sum(1 for _ in file.open(encoding="utf-8")) - 1
    servers_before = {role: cpu_seconds(p.pid) for role, p in SERVERS.items()}
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    reads_before = payout_reads(env["PAYFLOW_API_URL"])
    started = time.time()
    done, wall, started_by_run = payflow_json(
        ["run", str(file), "--yes"], env, profile=_profile_to(file)
    )
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures = RunFigures(rows, wall, done.returncode, load())
    figures.peak_mb = children.ru_maxrss / 1024
    if done.returncode != 0:
        figures.said = (done.stderr.strip().splitlines() or [""])[-1]
    run_and_its_children = (children.ru_utime - children_before.ru_utime) + (
        children.ru_stime - children_before.ru_stime
    )
    figures.cpu["run"] = run_and_its_children - started_by_run
    if started_by_run:
        figures.cpu["its Prefect server"] = started_by_run
    for role, before in servers_before.items():
        if role in SERVERS:
            figures.cpu[role] = cpu_seconds(SERVERS[role].pid) - before
    try:
        # The run's JSON line; under py-spy, py-spy's own lines come before and after it.
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        figures.summary = json.loads(lines[-1])
    except (IndexError, ValueError):
        print(f"  run failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    log = home / "logs" / "payflow.log"
    marks = {name: at - started for name, at in log_marks(log, started).items()}
    for name, at in ledger_marks(home / "ledger.sqlite3", started).items():
        marks[name] = at if name in ("webhooks", "polls") else at - started
    marks["reads"] = payout_reads(env["PAYFLOW_API_URL"]) - reads_before
    figures.marks = marks
    return figures


def _profile_to(file: Path) -> Path | None:
    """Where the run of `file` leaves its profile with `--py-spy` (a new name each run)."""
    if not PROFILE:
        return None
    return PROFILE[0] / f"{file.stem}-{time.strftime('%H%M%S')}"


def payflow_json(
    args: list[str], env: dict[str, str], profile: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """`payflow ARGS --json` to its end, the seconds it took, and the CPU seconds of the
    processes it started (its temporary Prefect server); under py-spy with `profile`."""
    command = [*PAYFLOW, *args, "--json"]
    if profile is not None:
        # Raw folded stacks: sorted and summed with a few lines of shell, where a flame graph
        # only shows; --nonblocking so the sampling does not stop the run's threads.
        spy = ["py-spy", "record", "--nonblocking", "--subprocesses", "--rate", "100"]
        command = [*spy, "--format", "raw", "-o", f"{profile}.txt", "--", *command]
    started = time.time()
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    watcher = DescendantsCpu(process.pid)
    watcher.start()
    stdout, stderr = process.communicate()
    watcher.stop()
    done = subprocess.CompletedProcess(command, process.returncode, stdout, stderr)
    if profile is not None:
        print(f"    profile: {profile}.txt")
    # Under py-spy the run itself is py-spy's child: its CPU is not split off.
    return done, time.time() - started, 0.0 if profile else watcher.seconds()


class DescendantsCpu(threading.Thread):
    """The CPU seconds of a process's descendants (not its own), read from /proc every 0.2 s
    while they live: the run's rusage counts its temporary Prefect server's CPU as its own
    once it reaps it. The last 0.2 s of a descendant's life may go unseen."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self._pid = pid
        self._seen: dict[int, float] = {}
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.wait(0.2):
            for pid in descendants(self._pid):
                # One may end between the listing and the read.
                with suppress(OSError, IndexError, ValueError):
                    self._seen[pid] = cpu_seconds(pid)

    def stop(self) -> None:
        self._done.set()
        self.join()

    def seconds(self) -> float:
        return sum(self._seen.values())


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (Linux /proc/PID/task/TID/children)."""
    found: list[int] = []
    queue = [pid]
    while queue:
        parent = queue.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found.extend(children)
            queue.extend(children)
    return found


def payout_reads(sandbox_url: str) -> float:
    """GET /v1/payouts/{id} the sandbox has answered so far (polls and reconciliation)."""
    return float(httpx.get(f"{sandbox_url}/_sandbox/stats", timeout=60).json()["payoutReads"])


PHASES = (
    # (label, end mark); each phase runs from the previous phase's end
    ("start-up (imports, Prefect server, flow)", "intake-batch-begin"),
    ("read", "read"),
    ("services and SBP bank look-ups", "banks"),
    ("validate", "validate"),
    ("register", "register"),
    ("intake's end, totals, confirm", "pay-batch-begin"),
    ("approve, balance, submit (last POST recorded)", "submit_last"),
    ("track (to the last final status)", "final_last"),
    ("report from the ledger (pay flow ends)", "pay-batch-end"),
)


def print_run(figures: RunFigures, bound: float | None) -> None:
    """The phase table of one run, and its ratio to the bound."""
    print(f"  {figures.rows} rows: {figures.wall:.1f} s, exit {figures.exit_code} ({figures.load})")
    previous = 0.0
    for label, mark in PHASES:
        at = figures.marks.get(mark)
        if at is None:
            continue
        print(f"    {label:<42} {at - previous:7.2f} s   (at {at:6.2f})")
        previous = max(previous, at)
    print(f"    {'end of run (exit, servers stopped)':<42} {figures.wall - previous:7.2f} s")
    first, last = figures.marks.get("submit_first"), figures.marks.get("submit_last")
    if first is not None and last is not None:
        print(f"    first claim to last POST recorded: {last - first:.2f} s (first at {first:.2f})")
    webhooks = int(figures.marks.get("webhooks", 0))
    polls = int(figures.marks.get("polls", 0))
    print(f"    status moves recorded: {webhooks} by webhook, {polls} by poll")
    reads = int(figures.marks.get("reads", 0))
    print(f"    payouts read by id (the run's polls; it re-fetches none at its end): {reads}")
    if figures.cpu:
        total = sum(figures.cpu.values())
        used = ", ".join(f"{role} {seconds:.1f}" for role, seconds in figures.cpu.items())
        # Every process here shares the machine's cores: no run can be shorter than their
        # CPU time spread over all of them.
        print(
            f"    CPU seconds: {used}; total {total:.1f} on {CORES} cores, "
            f"so at least {total / CORES:.1f} s of the run's {figures.wall:.1f} s"
        )
    if bound and figures.exit_code != 0:
        # A run that stopped (waiting for approval, say) is fast and paid nothing: a ratio for
        # it once read 0.90.
        print(f"    no ratio: the run did not pay every row ({figures.said})")
    elif bound:
        used = ", ".join(f"{role} {seconds:.1f}" for role, seconds in figures.cpu.items())
        floor = sum(figures.cpu.values()) / CORES
        print(
            f"    bound {bound:.1f} s; ratio bound / run = {bound / figures.wall:.2f} "
            f"(CPU s: {used}; floor on {CORES} cores {floor:.1f} s)"
        )
    if bound and "run" in figures.cpu:
        per_row = 1000 * figures.cpu["run"] / figures.rows
        wall_per_row = 1000 * figures.wall / figures.rows
        print(
            f"    run process: {per_row:.2f} ms of CPU per row, {wall_per_row:.2f} ms of wall per "
            f"row; peak memory of the finished runs so far {figures.peak_mb:.0f} MB"
        )


def timed(command: list[str], env: dict[str, str], times: int = 3) -> list[float]:
    """Seconds each of `times` runs of `command` took."""
    out = []
    for _ in range(times):
        started = time.perf_counter()
        subprocess.run(command, env=env, capture_output=True, check=False)
        out.append(time.perf_counter() - started)
    return out


def import_count(env: dict[str, str]) -> tuple[int, float]:
    """Modules `payflow --help` imports, and their cumulative import time (-X importtime)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "payflow", "--help"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    total = 0
    for line in lines[1:]:
        cumulative = line.split("|")[1].strip()
        if line.split("|")[2].startswith(" ") and not line.split("|")[2].startswith("  "):
            total += int(cumulative)  # top-level imports only: their cumulative covers the rest
    return len(lines) - 1, total / 1e6


def quick_checks(env: dict[str, str], work: Path) -> None:
    """`payflow --help` and `payflow validate` of 300 rows, 3 times each."""
    help_times = timed([*PAYFLOW, "--help"], env)
    modules, seconds = import_count(env)
    print(
        f"payflow --help: {', '.join(f'{t:.2f}' for t in help_times)} s "
        f"({modules} modules, {seconds:.2f} s of imports by -X importtime) ({load()})"
    )
    batch = work / "validate-300.csv"
    write_batch(batch, 300, "v")
    validate_times = timed([*PAYFLOW, "validate", str(batch), "--out", str(work)], env)
    print(
        f"payflow validate (300 rows): {', '.join(f'{t:.2f}' for t in validate_times)} s ({load()})"
    )


@contextmanager
def prefect_server(work: Path, env: dict[str, str]) -> Iterator[str]:
    """A Prefect server started once (its own home); yields its PREFECT_API_URL."""
    port = free_port()
    server_env = dict(env)
    sys.path.insert(0, str(ROOT))
    from payflow.quiet import prefect_environment

    server_env.update(prefect_environment(work / "prefect-server"))
    (work / "prefect-server").mkdir(parents=True, exist_ok=True)
    command = [
        str(Path(sys.executable).with_name("prefect")),
        "server",
        "start",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-services",
    ]
    url = f"http://127.0.0.1:{port}/api"
    started = time.perf_counter()
    with serve(command, server_env, f"{url}/health", work / "prefect-server.log", "Prefect"):
        print(f"Prefect server up in {time.perf_counter() - started:.1f} s at {url} ({load()})")
        yield url


def pay(
    work: Path,
    env: dict[str, str],
    rows: int,
    *,
    webhooks: bool,
    again: bool = False,
    reconcile: tuple[int, ...] = (),
    latency: float = 0.05,
    name: str = "",
) -> RunFigures:
    """Pay a fresh batch of `rows` (or the same one `again`) with its own PAYFLOW_HOME (named
    `name`, else by its size)."""
    home = work / f"home-{name or rows}"
    run_env = dict(env, PAYFLOW_HOME=str(home))
    file = work / f"batch-{name or rows}.csv"
    if not again:
        write_batch(file, rows, f"b{rows}-{time.time_ns()}")
        sign_in(run_env)
    with ExitStack() as stack:
        if webhooks:
            port = free_port()
            home.mkdir(parents=True, exist_ok=True)
            receiver = [*PAYFLOW, "webhooks", "--port", str(port)]
            ready = f"http://127.0.0.1:{port}/health"
            log = work / f"webhooks-{name or rows}.log"
            stack.enter_context(serve(receiver, run_env, ready, log, "webhook receiver"))
            run_env["PAYFLOW_WEBHOOK_URL"] = f"http://127.0.0.1:{port}/webhooks"
        figures = run_once(file, run_env, home)
        for in_flight in reconcile if figures.summary.get("batch_id") else ():
            reconcile_env = dict(run_env, PAYFLOW_RECONCILE_CONCURRENCY=str(in_flight))
            reconcile_after(str(figures.summary["batch_id"]), reconcile_env, latency)
        return figures


def sign_in(env: dict[str, str]) -> None:
    """Make the fresh ledger of PAYFLOW_HOME ask for no approval, add a maker and sign in as
    them: against a service (not the embedded sandbox) nobody pays without a sign-in, and the
    shipped policy asks a checker to approve a large RUB total. The bench times paying, not
    waiting; the policy is stored as `payflow policy set` and a second admin's confirm would."""
    password = "a bench password"
    for command in (
        ["console", "add-user", "bench", "--role", "maker", "--role", "admin", "--password-stdin"],
        ["login", "bench", "--password-stdin"],
    ):
        done = subprocess.run(
            [*PAYFLOW, *command], env=env, input=password, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"payflow {command[0]} failed: {done.stderr.strip()}")
    no_approvals = (
        "from payflow.approvals.store import add_version\n"
        "from payflow.runtime import open_ledger\n"
        "from payflow.settings import Settings\n"
        "body = 'currencies:\\n  \"*\":\\n    bands:\\n      - {steps: 0}\\n'\n"
        "add_version(open_ledger(Settings()), body, 'bench', confirmed=True)\n"
    )
    subprocess.run([sys.executable, "-c", no_approvals], env=env, check=True)


def reconcile_after(batch_id: str, env: dict[str, str], latency: float) -> None:
    """What the scheduled reconciliation does after the run: `payflow reconcile BATCH`, which
    re-fetches every payout of the batch at PAYFLOW_RECONCILE_CONCURRENCY requests at once."""
    reads_before = payout_reads(env["PAYFLOW_API_URL"])
    sandbox_before = cpu_seconds(SERVERS["sandbox"].pid)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    in_flight = int(env["PAYFLOW_RECONCILE_CONCURRENCY"])
    profile = _profile_to(Path(f"reconcile-{in_flight}"))
    done, wall, _ = payflow_json(["reconcile", batch_id], env, profile=profile)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    sandbox = cpu_seconds(SERVERS["sandbox"].pid) - sandbox_before
    reads = payout_reads(env["PAYFLOW_API_URL"]) - reads_before
    bound = reads * latency / in_flight
    print(
        f"    then the scheduled reconciliation (payflow reconcile, exit {done.returncode}): "
        f"{wall:.1f} s for {reads:.0f} payouts re-fetched at {in_flight} in flight, bound "
        f"{bound:.1f} s (CPU s: it {cpu:.1f}, sandbox {sandbox:.1f}; floor on 2 cores "
        f"{(cpu + sandbox) / 2:.1f} s) ({load()})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", default="1000", help="sizes, comma-separated (1000,5000,20000)")
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--prefect", choices=("temporary", "server"), default="temporary")
    parser.add_argument("--no-webhooks", action="store_true", help="polling alone")
    parser.add_argument("--quick-checks", action="store_true", help="--help and validate too")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument(
        "--reconcile", action="store_true", help="time `payflow reconcile` after each size"
    )
    parser.add_argument(
        "--reconcile-in-flight",
        help="reconcile after each size once at each of these concurrencies (32,64,128)",
    )
    parser.add_argument("--py-spy", type=Path, help="profile each run into this folder")
    args = parser.parse_args()
    if args.py_spy:
        args.py_spy.mkdir(parents=True, exist_ok=True)
        PROFILE.append(args.py_spy.resolve())
    sizes = [int(size) for size in args.rows.split(",")]
    reconcile: tuple[int, ...] = ()
    if args.reconcile_in_flight:
        reconcile = tuple(int(n) for n in args.reconcile_in_flight.split(","))
    elif args.reconcile:
        reconcile = (args.in_flight,)
    print(f"machine: {machine()}")
    print(
        f"{args.in_flight} in flight, {args.latency} s latency, Prefect {args.prefect} ({load()})"
    )
    work = Path(tempfile.mkdtemp(prefix="bench-run-"))
    env = base_env()
    if args.quick_checks:
        quick_checks(env, work)
    sandbox_port = free_port()
    sandbox_url = f"http://127.0.0.1:{sandbox_port}"
    sandbox_command = [*PAYFLOW, "sandbox", "--port", str(sandbox_port)]
    sandbox_command += ["--latency", str(args.latency)]
    processing, final = 0.2, 0.5  # the sandbox's defaults: CREATED -> PROCESSING -> final
    with ExitStack() as stack:
        stack.enter_context(
            serve(
                sandbox_command,
                env,
                f"{sandbox_url}/_sandbox/stats",
                work / "sandbox.log",
                "sandbox",
            )
        )
        env.update(
            PAYFLOW_API_URL=sandbox_url,
            PAYFLOW_API_TOKEN=TOKEN,
            PAYFLOW_MAX_IN_FLIGHT=str(args.in_flight),
        )
        if args.prefect == "server":
            env["PREFECT_API_URL"] = stack.enter_context(prefect_server(work, env))
        # One Prefect home for every run, as an operator's: the first run creates its database.
        env.setdefault("PREFECT_HOME", str(work / "prefect-home"))
        # A 10-row batch first (a warm-up, shown), paid again at the end with nothing to pay.
        print("  a 10-row batch (the first run: Prefect's database is created):")
        print_run(pay(work, env, 10, webhooks=not args.no_webhooks, name="first"), None)
        for rows in sizes:
            bound = rows / (args.in_flight / args.latency) + processing + final
            figures = pay(
                work,
                env,
                rows,
                webhooks=not args.no_webhooks,
                reconcile=reconcile,
                latency=args.latency,
            )
            print_run(figures, bound)
        print("  the same 10-row file again (nothing to pay: the fixed cost of a run):")
        again = pay(work, env, 10, webhooks=not args.no_webhooks, again=True, name="first")
        print_run(again, None)
    keep_or_remove(work, keep=args.keep)


def keep_or_remove(work: Path, *, keep: bool) -> None:
    """Print the work folder's path (`--keep`), or remove it."""
    if keep:
        print(f"work folder: {work}")
    else:
        subprocess.run(["rm", "-rf", str(work)], check=False)


if __name__ == "__main__":
    main()
