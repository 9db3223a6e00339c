"""Who may reach a payflow server, and over what: loopback by default, beyond it only over TLS.

The one rule of the console, `payflow webhooks` and `payflow links serve`. Sign-in sends
passwords and the session cookie approves payouts; webhooks carry payout statuses; claim pages
lead recipients to enter bank details: served beyond this machine over plain HTTP, anyone on the
path reads them. A host other than loopback is refused unless the server serves TLS itself
(`--certfile/--keyfile`) or the operator names the TLS proxy in front of it
(`--forwarded-allow-ips`). Proxy headers (X-Forwarded-For, X-Forwarded-Proto) are trusted from
those addresses only: uvicorn's default trusts them from 127.0.0.1, so any local process could
pose as any client address (and get past the sign-in limit per address) or claim HTTPS.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class ExposureRefused(ValueError):
    """A server would serve beyond this machine without TLS; the message says what to give."""


@dataclass(frozen=True)
class Exposure:
    """Where a server listens, its TLS files and the proxies whose headers it trusts; `serves`
    names what would cross the network, for the refusal."""

    host: str
    certfile: Path | None = None
    keyfile: Path | None = None
    forwarded_allow_ips: tuple[str, ...] = ()
    serves: str = "sign-in and its cookie"

    @property
    def tls(self) -> bool:
        """Whether the server serves HTTPS itself."""
        return self.certfile is not None

    def check(self) -> None:
        """Raise ExposureRefused when this set-up would serve sign-in in the clear off-machine,
        or names TLS files it cannot use."""
        if (self.certfile is None) != (self.keyfile is None):
            raise ExposureRefused("--certfile and --keyfile go together: give both, or neither")
        for option, path in (("--certfile", self.certfile), ("--keyfile", self.keyfile)):
            if path is not None and not (path.is_file() and os.access(path, os.R_OK)):
                raise ExposureRefused(f"{option} {path}: no readable file there")
        if is_loopback(self.host) or self.tls or self.forwarded_allow_ips:
            return
        raise ExposureRefused(
            f"--host {self.host} would serve {self.serves} beyond this machine over "
            "plain HTTP: give --certfile and --keyfile (TLS), or --forwarded-allow-ips with the "
            "addresses of the TLS proxy in front of it; nothing was started"
        )

    def uvicorn_options(self) -> dict[str, Any]:
        """uvicorn.Config's TLS and proxy options for this exposure."""
        return {
            "ssl_certfile": str(self.certfile) if self.certfile else None,
            "ssl_keyfile": str(self.keyfile) if self.keyfile else None,
            # Without named proxies, no proxy header is read at all (not even from 127.0.0.1).
            "proxy_headers": bool(self.forwarded_allow_ips),
            "forwarded_allow_ips": list(self.forwarded_allow_ips) or [],
        }

    def url(self, port: int) -> str:
        """The address to print for the operator."""
        scheme = "https" if self.tls else "http"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{port}/"


def is_loopback(host: str) -> bool:
    """Whether `host` is only reachable from this machine (127.0.0.0/8, ::1, localhost)."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # another name: it may resolve to any interface


def proxy_addresses(text: str | None) -> tuple[str, ...]:
    """The comma-separated proxy addresses of `--forwarded-allow-ips`; "*" is refused (it
    trusts every client's headers, the very forgery this option exists to stop)."""
    if not text:
        return ()
    addresses = tuple(part.strip() for part in text.split(",") if part.strip())
    for address in addresses:
        if address == "*":
            raise ExposureRefused(
                "--forwarded-allow-ips '*' trusts proxy headers from anyone, who could then "
                "pose as any address: name your proxy's addresses (or networks)"
            )
        try:
            ipaddress.ip_network(address, strict=False)
        except ValueError:
            raise ExposureRefused(
                f"--forwarded-allow-ips: {address!r} is not an IP address or network"
            ) from None
    return addresses
