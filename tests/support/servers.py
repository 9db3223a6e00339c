"""Servers and workers a test starts in other processes: a free port, a process group of their
own to start and stop them with, and whether one answers."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Mapping
from functools import cache
from pathlib import Path

import httpx


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listened on a moment ago; the OS picks it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def start_group(
    args: list[str], env: Mapping[str, str], log: Path, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    """Start `args` in its own session with its output in `log` and SIGINT at its default: a
    process started from a non-interactive parent inherits SIGINT ignored, and a Prefect worker
    then ignores SIGTERM."""
    with log.open("wb") as out:
        return subprocess.Popen(
            args,
            cwd=cwd,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the group `start_group` made (a worker and its flow run processes); SIGKILL it if
    it is still there after 30 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@cache
def kept_client() -> httpx.Client:
    """One client for the test process's waits and sandbox look-ups: `httpx.get` builds a
    client (with its TLS context) per call, about 20 times the CPU of a request on a kept one,
    and waits ask twice a second."""
    return httpx.Client(timeout=10)


def answers(url: str) -> bool:
    """The server at `url` answered 200 (a health or stats page)."""
    try:
        return kept_client().get(url, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False
