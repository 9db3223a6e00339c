"""One large batch paid by 1 and by 2 Prefect process workers on a PostgreSQL ledger.

    .venv/bin/python bench/bench_workers.py [--rows 100000] [--workers 1,2] [--in-flight 32]
        [--latency 0.05] [--chunk-size 500] [--keep]

Each worker count gets the stack of the deployment tests (`support.deployments.deployed_stack`,
as tests/flows/test_daily_deployments_e2e.py pays one large batch on two workers): a Prefect
server on PostgreSQL, `prefect deploy --all` from prefect.yaml, that many process workers of
the `payflow` pool, a fresh PostgreSQL ledger (127.0.0.1:5432, scripts/ensure-postgres.sh), a
`payflow sandbox` process at `--latency` seconds a request (through its faults endpoint), and
a webhook receiver (`payflow webhooks`) that the runs give the sandbox as callbackUrl. The
settings are a real deployment's: PAYFLOW_MAX_IN_FLIGHT, PAYFLOW_CHUNK_SIZE and the default
polls and quiet period, not the tests' short ones.

The batch is N valid rows (`bench_run.write_batch`), dropped in the inbox: the daily-payouts
deployment registers it and starts its pay run; then, as the docs' "One large batch across
workers" says, one more `prefect deployment run pay-batch/pay-batch --param batch_id=BATCH
--tag batch:BATCH` per further worker (through the API, as the tests do). The ledger's policy
asks one checker: every run waits paused until `payflow approve` resumes them all at once
(each notices on its own poll, up to 10 s apart, printed as each claimer's first claim).

Printed per worker count: the submit phase's wall time (first SUBMITTING to the last submit
in the ledger's status_events) and rows per second; the rows each run claimed ("claimed by
host:pid:nonce") and its worker; the CPU seconds of each process while the batch was paid
(from /proc, sampled every half second: each pay run's process since it started, the others
from the approval; PostgreSQL's own processes are not counted); and the exactly-once check:
the sandbox's payouts of the batch, each externalId sent exactly once and as many as rows, and
the ledger's states, all final. At the end, each count's rows per second, their ratio, and
each to its bound (in flight / latency per pay run: each run has its own requests in flight).
On 2 cores the CPU of the runs, the sandbox and the receiver, not the bound, may keep a second
worker from helping: the CPU line says how close to the cores' time it came. Asserts nothing:
on a shared machine this is a measurement, not a test; `uptime` is printed beside every figure.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from bench_run import cpu_seconds, descendants, keep_or_remove, load, machine, write_batch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the deployment tests' stack, reused as it is

from support.deployments import (  # noqa: E402
    PAYFLOW,
    Stack,
    deployed_stack,
    final,
    paused,
    pay_runs,
    set_latency,
    start,
    wait_for,
    worker_of_run,
)
from support.servers import answers, free_port, stop_group  # noqa: E402

from payflow.intake import batch_id_of  # noqa: E402

FINAL_STATES = ("COMPLETED", "FAILED", "CANCELED", "EXPIRED")


class CpuSampler(threading.Thread):
    """CPU seconds of every descendant of this process, read from /proc every half second while
    each lives (the last half second of one that ends may go unseen); by pid, with its command
    line."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.seen: dict[int, float] = {}
        self.commands: dict[int, str] = {}
        self._done = threading.Event()

    def sample(self) -> dict[int, float]:
        for pid in descendants(os.getpid()):
            try:  # one may end between the listing and the read
                self.seen[pid] = cpu_seconds(pid)
                if pid not in self.commands:
                    raw = Path(f"/proc/{pid}/cmdline").read_bytes()
                    self.commands[pid] = raw.replace(b"\0", b" ").decode(errors="replace")
            except (OSError, IndexError, ValueError):
                continue
        return dict(self.seen)

    def run(self) -> None:
        while not self._done.wait(0.5):
            self.sample()

    def stop(self) -> None:
        self._done.set()
        self.join()


def role_of(command: str) -> str | None:
    """The server a command line starts, for the CPU line (None: not one printed apart)."""
    for words, role in (
        ("payflow sandbox", "sandbox"),
        ("payflow webhooks", "webhook receiver"),
        ("server start", "Prefect server"),
    ):
        if words in command:
            return role
    return None


def pay_once(work: Path, rows: int, workers: int, args: argparse.Namespace) -> float | None:
    """Deploy with `workers` process workers, register `rows` rows, pay them with one pay run
    per worker, print the figures; the rows per second of the submit phase (None: none sent)."""
    root = work / f"workers-{workers}"
    root.mkdir()
    names = [f"worker-{chr(ord('a') + n)}" for n in range(workers)]
    receiver_port = free_port()
    settings = {
        "PAYFLOW_MAX_IN_FLIGHT": str(args.in_flight),
        "PAYFLOW_CHUNK_SIZE": str(args.chunk_size),
        "PAYFLOW_WEBHOOK_URL": f"http://127.0.0.1:{receiver_port}/webhooks",
        # A real deployment's, not the tests' (support.deployments): polls after webhooks.
        "PAYFLOW_POLL_INTERVAL": "2",
        "PAYFLOW_POLL_MAX_INTERVAL": "60",
        "PAYFLOW_TRACK_QUIET_PERIOD": "5",
        "PAYFLOW_RUN_STALE_AFTER": "60",
    }
    started = time.perf_counter()
    with deployed_stack(root, workers=names, **settings) as stack:
        set_latency(stack, args.latency)
        receiver = [*PAYFLOW, "webhooks", "--port", str(receiver_port)]
        stack.running.callback(stop_group, start(receiver, stack.env, root / "webhooks.log"))
        wait_for(
            "the webhook receiver", lambda: answers(f"http://127.0.0.1:{receiver_port}/health")
        )
        print(
            f"  {workers} worker(s): stack deployed in {time.perf_counter() - started:.0f} s "
            f"({load()})"
        )
        batch_id, external_ids = register(stack, rows)
        for _ in range(workers - 1):
            stack.deployment_run(
                "pay-batch/pay-batch", "-p", f"batch_id={batch_id}", "--tag", f"batch:{batch_id}"
            )
        waiting = 300 + rows / 100
        wait_for("every pay run paused", lambda: len(paused(stack, batch_id)) == workers, waiting)
        sampler = CpuSampler()
        before = sampler.sample()
        sampler.start()
        approved, approved_at = time.perf_counter(), datetime.now(UTC)
        stack.approve(batch_id)
        took = time.perf_counter() - approved
        print(f"    the maker's submit and `payflow approve` took {took:.1f} s ({load()})")
        runs = pay_runs(stack, batch_id)
        ends = [
            wait_for("a pay run's end", lambda r=run["id"]: final(stack, r), 1800 + rows / 20)
            for run in runs
        ]
        wall = time.perf_counter() - approved
        sampler.stop()
        print(
            f"    from the approval to every pay run's end: {wall:.1f} s; runs ended "
            f"{', '.join(ends)} ({load()})"
        )
        rate = print_submit(stack, batch_id, rows, runs, approved_at)
        print_cpu(stack, runs, before, sampler, rows, wall)
        print_exactly_once(stack, batch_id, external_ids)
        return rate


def register(stack: Stack, rows: int) -> tuple[str, list[str]]:
    """Drop a batch of `rows` rows in the inbox; the daily run registers it and starts its pay
    run. The batch id and its externalIds."""
    stack.inbox.mkdir(exist_ok=True)
    prefix = f"w{time.time_ns()}"
    path = stack.root / "large.csv"
    write_batch(path, rows, prefix)
    batch_id = batch_id_of(path.read_bytes())
    path.rename(stack.inbox / path.name)
    registering = time.perf_counter()
    daily = stack.deployment_run("daily-payouts/daily-payouts")
    ended = wait_for("the daily run", lambda: final(stack, daily), 300 + rows / 50)
    print(
        f"    registered by the daily run ({ended}) in {time.perf_counter() - registering:.1f} s "
        f"({load()})"
    )
    return batch_id, [f"{prefix}-{n}" for n in range(rows)]


def print_submit(
    stack: Stack, batch_id: str, rows: int, runs: list[dict[str, object]], approved_at: datetime
) -> float | None:
    """Submit phase from status_events: its wall time, rows per second, and each claimer's rows
    with its first and last claim from the first SUBMITTING; the rows per second."""
    [(first, last, final_last)] = stack.ledger(
        "SELECT MIN(e.at) FILTER (WHERE e.to_state = 'SUBMITTING'), "
        "MAX(e.at) FILTER (WHERE e.source IN ('submit', 'resolve')), "
        f"MAX(e.at) FILTER (WHERE e.to_state IN {FINAL_STATES}) "
        "FROM status_events e JOIN payouts p ON p.external_id = e.external_id "
        "WHERE p.batch_id = %s",
        batch_id,
    )
    if first is None or last is None:
        print("    nothing was submitted")
        return None
    seconds = (last - first).total_seconds()
    rate = rows / seconds
    waited = (as_utc(first) - approved_at).total_seconds()
    print(f"    the first SUBMITTING {waited:.1f} s after the approval began")
    finals = f"{(final_last - first).total_seconds():.1f} s" if final_last else "never"
    print(
        f"    submit: {rows} rows from the first SUBMITTING to the last submit in {seconds:.1f} s: "
        f"{rate:.0f} rows/s (the last final status at {finals})"
    )
    claims = stack.ledger(
        "SELECT e.status_message, count(*), MIN(e.at), MAX(e.at) FROM status_events e "
        "JOIN payouts p ON p.external_id = e.external_id "
        "WHERE p.batch_id = %s AND e.to_state = 'SUBMITTING' GROUP BY e.status_message",
        batch_id,
    )
    owners = worker_of_run(stack)
    worker_by_pid = {}
    for run in runs:
        pid = str(stack.api("GET", f"/flow_runs/{run['id']}")["infrastructure_pid"])
        worker_by_pid[pid.rpartition(":")[2]] = owners.get(str(run["id"]), "?")
    for message, count, since, until in sorted(claims, key=lambda claim: claim[2]):
        pid = str(message).split(":")[1] if message and message.count(":") >= 2 else "?"
        worker = worker_by_pid.get(pid, "no pay run of this batch")
        print(
            f"      {message}: {count} rows ({worker}), "
            f"claims from {(since - first).total_seconds():.1f} s "
            f"to {(until - first).total_seconds():.1f} s"
        )
    return rate


def as_utc(at: datetime) -> datetime:
    """A time read from the ledger (stored as naive UTC) as an aware one."""
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def print_cpu(
    stack: Stack,
    runs: list[dict[str, object]],
    before: dict[int, float],
    sampler: CpuSampler,
    rows: int,
    wall: float,
) -> None:
    """CPU seconds of each process while the batch was paid: each pay run's process (from its
    start), each worker, and the servers (from the approval); beside the cores' time in `wall`."""
    run_pids = {}
    for run in runs:
        pid = str(stack.api("GET", f"/flow_runs/{run['id']}")["infrastructure_pid"])
        run_pids[int(pid.rpartition(":")[2])] = f"pay run {str(run['id'])[:8]}"
    workers = {process.pid: name for name, process in stack.workers.items()}
    used: Counter[str] = Counter()
    for pid, seconds in sampler.seen.items():
        if pid in run_pids:
            used[run_pids[pid]] += seconds  # its start-up and pause included
            continue
        role = workers.get(pid) or role_of(sampler.commands.get(pid, ""))
        if role:
            used[role] += seconds - before.get(pid, 0.0)
    total = sum(used.values())
    shown = ", ".join(f"{role} {seconds:.1f}" for role, seconds in sorted(used.items()))
    cores = os.cpu_count() or 1
    print(
        f"    CPU seconds: {shown}; total {total:.1f}, of the {cores * wall:.0f} s {cores} cores "
        f"had from the approval to the runs' end ({load()})"
    )
    paying = sum(seconds for role, seconds in used.items() if role.startswith("pay run"))
    print(f"    the pay runs' CPU: {1000 * paying / rows:.2f} ms a row, start-up included")


def print_exactly_once(stack: Stack, batch_id: str, external_ids: list[str]) -> None:
    """The sandbox's payouts of the batch by externalId, and the ledger's states."""
    sent = stack.sandbox_stats()["payoutsByExternalId"]
    ours = {external_id: sent.get(external_id, 0) for external_id in external_ids}
    times = Counter(ours.values())
    others = len(set(sent) - set(ours))
    exactly_once = set(times) == {1} and sum(ours.values()) == len(external_ids)
    print(
        f"    exactly once: {'yes' if exactly_once else 'NO'} (sandbox payouts by times sent: "
        f"{dict(sorted(times.items()))}; {others} other externalIds at the sandbox)"
    )
    by_state = "SELECT state, count(*) FROM payouts WHERE batch_id = %s GROUP BY state"
    states = dict(stack.ledger(by_state, batch_id))
    all_final = set(states) <= set(FINAL_STATES)
    print(f"    ledger: {states}; all final: {'yes' if all_final else 'NO'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--workers", default="1,2", help="worker counts, comma-separated")
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--chunk-size", type=int, default=500)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs)")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    print(
        f"{args.rows} rows; {args.in_flight} in flight per run, {args.latency} s latency, "
        f"chunks of {args.chunk_size} ({load()})"
    )
    work = Path(tempfile.mkdtemp(prefix="bench-workers-"))
    rates = {}
    for workers in (int(count) for count in args.workers.split(",")):
        rates[workers] = pay_once(work, args.rows, workers, args)
    bound = args.in_flight / args.latency  # per pay run: each has its own requests in flight
    shown = ", ".join(
        f"{workers} worker(s) {rate:.0f}" if rate else f"{workers} worker(s) none"
        for workers, rate in rates.items()
    )
    print(f"rows per second in the submit phase: {shown} ({load()})")
    paid = {workers: rate for workers, rate in rates.items() if rate}
    if len(paid) > 1:
        fewest = min(paid)
        for workers, rate in paid.items():
            if workers != fewest:
                print(
                    f"  {workers} workers / {fewest}: {rate / paid[fewest]:.2f}x "
                    f"(bound {workers * bound:.0f}/s: {rate / (workers * bound):.2f} of it; "
                    f"{fewest}: {paid[fewest] / (fewest * bound):.2f} of {fewest * bound:.0f}/s)"
                )
    keep_or_remove(work, keep=args.keep)


if __name__ == "__main__":
    main()
