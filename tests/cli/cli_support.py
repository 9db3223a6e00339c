"""Running the real `payflow` command in a subprocess, as an operator would."""

from __future__ import annotations

import csv
import os
import pty
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from decimal import Decimal
from pathlib import Path

from support.shared_prefect import SHARED_PREFECT_VARIABLE
from support.tracking import TRACK_QUIET_PERIOD

from payflow.model import PayoutInstruction

PAYFLOW = [sys.executable, "-m", "payflow"]
NOISE = (
    "Traceback",
    "database is locked",
    "CancelledError",
    "Starting temporary server",
    "prefect",
    "Prefect",
    "Task run",
    "Flow run",
)


def payflow_env(
    home: Path,
    prefect_home: Path,
    *,
    temporary_prefect: bool = False,
    signed_in: str | None = "maker",
    **extra: str,
) -> dict[str, str]:
    """The environment of one operator: own PAYFLOW_HOME, and the test process's Prefect server
    (or, with `temporary_prefect`, a temporary one per run over a shared Prefect home).

    Against an API (PAYFLOW_API_URL given) nobody acts without signing in: the operator
    `signed_in` (a maker) is added to the env's ledger and signed in under its home, as
    `payflow login` would; another person is `support.operators.as_person(env, NAME, ROLES)`.
    On the embedded sandbox no sign-in is made (it takes the OS user, and says so)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PAYFLOW_", "PREFECT_")) and k != SHARED_PREFECT_VARIABLE
    }
    shared = os.environ.get(SHARED_PREFECT_VARIABLE)
    if shared and not temporary_prefect:
        env["PREFECT_API_URL"] = shared
    env.update(
        PAYFLOW_HOME=str(home),
        PREFECT_HOME=str(prefect_home),
        PAYFLOW_TRACK_DEADLINE="120",
        PAYFLOW_POLL_INTERVAL="0.5",
        PAYFLOW_TRACK_QUIET_PERIOD=TRACK_QUIET_PERIOD,  # why: support.tracking
        # The session's Prefect server reads no heartbeat; each flow's end waited up to 1 s.
        PAYFLOW_PREFECT_HEARTBEATS="false",
        # A command that crashes (a segmentation fault) prints where each thread was.
        PYTHONFAULTHANDLER="1",
    )
    env.update(extra)
    if signed_in and "PAYFLOW_API_URL" in extra:
        _sign_in(env, signed_in)
    return env


def _sign_in(env: dict[str, str], name: str) -> None:
    """Sign `name` (a maker) in under the env's home; a ledger that cannot open (a test of a
    bad PAYFLOW_LEDGER_URL) is left for the command to refuse."""
    from sqlalchemy.exc import SQLAlchemyError
    from support.operators import ledger_url_of, sign_in_at

    with suppress(SQLAlchemyError, OSError, ValueError):
        sign_in_at(ledger_url_of(env), name, Path(env["PAYFLOW_HOME"]), "maker")


def start_payflow(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    """`payflow ARGS` in its own process group, as an operator's terminal starts it (a signal
    test sends it SIGTERM); its output in pipes."""
    return subprocess.Popen(
        [*PAYFLOW, *args],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def start_in_a_terminal(
    args: list[str], env: dict[str, str], cwd: Path, *, output_too: bool = False
) -> tuple[subprocess.Popen[bytes], int]:
    """`payflow ARGS` with a terminal on stdin (so it asks its question) and, with `output_too`,
    on stdout and stderr (else pipes); the process and the terminal's end to answer and read
    through (the caller closes it)."""
    leader, follower = pty.openpty()
    output = follower if output_too else subprocess.PIPE
    process = subprocess.Popen(
        [*PAYFLOW, *args], env=env, cwd=cwd, stdin=follower, stdout=output, stderr=output
    )
    os.close(follower)
    return process, leader


@contextmanager
def killed_at_the_end(process: subprocess.Popen[bytes]) -> Iterator[subprocess.Popen[bytes]]:
    """The process group of a `start_payflow` process is SIGKILLed if it still runs when the
    block ends (a wait that failed): no test leaves a run behind."""
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def run_payflow(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """Run `payflow ARGS` to the end and capture what the operator would see."""
    return subprocess.run(
        [*PAYFLOW, *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def write_sim_batch(path: Path, rows: int, prefix: str) -> list[str]:
    """A batch of XOF mobile-money rows that all complete; returns their externalIds."""
    ids = [f"{prefix}-{i}" for i in range(1, rows + 1)]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["externalId", "amount", "currency", "paymentType", "requisites", "name", "userId"]
        )
        for i, external_id in enumerate(ids, start=1):
            writer.writerow(
                [external_id, "1000", "XOF", "SIM", f"22507{i:08d}", "Kouadio Yao", f"u-{i}"]
            )
    return ids


def sim_instruction(batch: str, n: int) -> PayoutInstruction:
    """Row `n + 1` of a batch registered straight into a ledger: an XOF wallet payout whose
    externalId, requisites and person (name, userId) name the batch and the row: the same
    person paid the same amount by two batches is a repeat (held), whatever the requisites."""
    return PayoutInstruction(
        row_number=n + 1,
        external_id=f"{batch}-{n}",
        amount=Decimal(100 * n),
        currency="XOF",
        payment_type="SIM",
        requisites=f"2250700{n:02d}{ord(batch[0]) % 100:02d}01",
        name=f"Awa Kone {batch}-{n}",
        user_id=f"u-{batch}-{n}",
    )
