"""An S3-compatible server on 127.0.0.1 for the storage tests: moto's server mode, in a process
of its own, started once per session (`s3_server` in tests/conftest.py)."""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from support.servers import answers, free_port, start_group, stop_group

# moto takes any key; these are what the standard AWS settings hand s3fs and boto3.
ACCESS_KEY, SECRET_KEY, REGION = "payflow-test-key", "payflow-test-secret", "us-east-1"


@dataclass(frozen=True)
class S3Server:
    """A running S3 server: its endpoint and the AWS settings a process needs to reach it."""

    endpoint: str

    @property
    def env(self) -> dict[str, str]:
        """The standard AWS settings (what s3fs and boto3 read) naming this server."""
        return {
            "AWS_ENDPOINT_URL_S3": self.endpoint,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_DEFAULT_REGION": REGION,
        }

    def client(self) -> object:
        """A boto3 S3 client of this server (the tests read objects back with it)."""
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name=REGION,
        )

    def new_bucket(self) -> str:
        """A new empty bucket's name."""
        name = f"payflow-{secrets.token_hex(4)}"
        self.client().create_bucket(Bucket=name)  # type: ignore[attr-defined]
        return name


@contextmanager
def moto_server(log: Path) -> Iterator[S3Server]:
    """Start moto's server on a free port of 127.0.0.1; stop it afterwards."""
    port = free_port()
    args = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    process = start_group(args, {"PATH": "/usr/bin:/bin"}, log)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not answers(f"{endpoint}/moto-api/"):
            assert process.poll() is None, log.read_text(encoding="utf-8")
            assert time.monotonic() < deadline, f"moto did not answer: {log.read_text()}"
            time.sleep(0.2)
        yield S3Server(endpoint)
    finally:
        stop_group(process)
