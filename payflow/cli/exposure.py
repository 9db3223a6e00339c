"""The options of a server that may listen beyond this machine, and their one check
(`payflow.console.exposure`): `payflow webhooks` and `payflow links serve` take the console's."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from payflow.cli.app import fail
from payflow.console.exposure import Exposure, ExposureRefused, proxy_addresses

Host = Annotated[
    str, typer.Option("--host", help="Address to bind; beyond loopback needs TLS or a proxy.")
]
CertFile = Annotated[
    Path | None, typer.Option("--certfile", help="TLS certificate (PEM): serve HTTPS.")
]
KeyFile = Annotated[
    Path | None, typer.Option("--keyfile", help="TLS private key (PEM) of --certfile.")
]
ForwardedAllowIps = Annotated[
    str | None,
    typer.Option(
        "--forwarded-allow-ips",
        help="Comma-separated addresses of the TLS proxy in front; its X-Forwarded-* headers "
        "are trusted, nobody else's.",
    ),
]


def checked_exposure(
    host: str,
    certfile: Path | None,
    keyfile: Path | None,
    forwarded_allow_ips: str | None,
    *,
    serves: str,
) -> Exposure:
    """The exposure the options ask for, or one line and exit 2 when it would serve `serves`
    beyond this machine in the clear (nothing is started)."""
    try:
        exposure = Exposure(host, certfile, keyfile, proxy_addresses(forwarded_allow_ips), serves)
        exposure.check()
    except ExposureRefused as exc:
        fail(str(exc))
    return exposure
