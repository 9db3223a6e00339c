"""The one settings object: environment variables (PAYFLOW_*) and an optional `.env` file.

Nothing reads the environment at import time; build `Settings()` where a command starts, or
`Settings(api_url=..., ...)` in a test.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

SANDBOX_TOKEN_DEFAULT = "sandbox-secret-token"


POSTGRES_DRIVER = "postgresql+psycopg"  # the PostgreSQL driver payflow installs (psycopg 3)
# A beat every 10/6 s at the least: a ledger write a loaded machine or a slow database delays by
# a second or two is still one of six, and the ledger is not written to many times a second.
RUN_STALE_AFTER_FLOOR = 10.0


# A pay run beats this many times in its window: a beat or two late is no death.
BEATS_PER_WINDOW = 6


class Settings(BaseSettings):
    """Everything payflow can be configured with; docs/reference/settings.md lists each field
    with its description (generated: give a new field a `Field(description=...)`)."""

    model_config = SettingsConfigDict(
        env_prefix="PAYFLOW_", env_file=".env", extra="ignore", frozen=True
    )

    api_url: str | None = Field(
        default=None, description="Base URL of the payments API; unset: the embedded sandbox."
    )
    api_token: SecretStr | None = Field(
        default=None, description="Merchant API token (X-Api-Token); never logged or shown."
    )
    ledger_url: str | None = Field(
        default=None, description="SQLAlchemy URL of the ledger; unset: SQLite under home."
    )
    home: Path = Field(
        default=Path(".payflow"),
        description="Folder of the SQLite ledger, reports, logs and Prefect's home (relative to "
        "the working directory).",
    )
    reports_url: str | None = Field(
        default=None,
        description="Where reports go, the rejects files included: a folder, or s3://bucket/prefix "
        "that every worker and the console reach (endpoint and credentials from the standard AWS_* "
        "settings); unset: reports under home.",
    )
    webhook_url: str | None = Field(
        default=None, description="Public URL of `payflow webhooks`, sent as callbackUrl."
    )
    widget_url: str | None = Field(
        default=None,
        description="Widget host (claims redirect to {widget_url}/payout-widget); unset: the "
        "embedded sandbox's own address.",
    )
    links_url: str = Field(
        default="http://127.0.0.1:8090",
        description="The merchant's public address of `payflow links serve` (claim URLs).",
    )
    link_claim_days: float = Field(
        default=7.0, gt=0, le=366, description="Days a claim URL stays valid."
    )
    max_in_flight: int = Field(
        default=16,
        ge=1,
        le=512,
        description="Requests in flight to the payments API at once (a reconciliation: "
        "PAYFLOW_RECONCILE_CONCURRENCY).",
    )
    max_requests_per_second: float | None = Field(
        default=None, gt=0, description="Ceiling on requests per second to the API."
    )
    chunk_size: int = Field(default=500, ge=1, description="Rows per submit task.")
    request_timeout: float = Field(default=30.0, gt=0, description="Seconds per HTTP request.")
    poll_interval: float = Field(default=2.0, gt=0, description="First poll delay, in seconds.")
    poll_max_interval: float = Field(default=60.0, gt=0, description="Longest poll backoff.")
    track_deadline: float = Field(
        default=900.0, gt=0, description="Seconds to wait for final statuses before giving up."
    )
    # A payout's own news (its creation, a webhook) makes the next webhook likely soon: polling it
    # sooner only loads the service. Without a webhook receiver nothing else comes, so a run
    # waits this long after its last POST before it learns any final status.
    track_quiet_period: float = Field(
        default=5.0,
        ge=0,
        description="Seconds after a payout's last news before tracking polls it.",
    )
    prefect_heartbeats: bool = Field(
        default=True,
        description="Prefect's flow-run heartbeats from the flows a command runs in its own "
        "process on an operator's Prefect server (PREFECT_API_URL); false: none, and each flow's "
        "end no longer waits up to a second for Prefect's heartbeat thread. payflow's watchdog "
        "reads the ledger's heartbeats; a command's own temporary server never gets Prefect's.",
    )
    max_rows: int = Field(
        default=1_000_000, ge=1, description="Data rows a batch file may hold (checked on read)."
    )
    max_columns: int = Field(
        default=200, ge=8, description="Columns a batch file's header may hold (checked on read)."
    )
    max_cell_chars: int = Field(
        default=32_767, ge=256, description="Characters one cell may hold (Excel's own limit)."
    )
    max_blank_rows: int = Field(
        default=10_000, ge=1, description="Empty rows in a row a sheet may hold before data ends."
    )

    stuck_after_minutes: dict[str, float] = Field(
        default_factory=lambda: {"SBP": 60.0, "SIM": 240.0, "EMAIL": 1440.0, "*": 4320.0},
        description="Minutes a payout may stay CREATED/PROCESSING per paymentType ('*': others).",
    )
    failure_classes_path: Path | None = Field(
        default=None,
        description="CSV of failure classes; unset: payflow/defaults/failure_classes.csv.",
    )
    reconcile_concurrency: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description="Payouts re-fetched at once by reconciliation; unset: max_in_flight.",
    )
    reconcile_recent_days: int = Field(
        default=30, ge=1, description="Days back that reconcile-recent re-fetches COMPLETED."
    )

    @field_validator("api_url")
    @classmethod
    def _api_url_is_http(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None  # PAYFLOW_API_URL="" is unset, as a blank line in .env is
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                "must be an http:// or https:// URL with a host, e.g. https://api.example.com"
            )
        try:
            _ = parts.port
        except ValueError:
            raise ValueError("has a port that is not a number from 0 to 65535") from None
        return value.strip()

    @field_validator("ledger_url")
    @classmethod
    def _ledger_url_is_supported(cls, value: str | None) -> str | None:
        if not value:
            return value
        from sqlalchemy.engine import make_url
        from sqlalchemy.exc import ArgumentError

        try:
            url = make_url(value)
        except ArgumentError:
            raise ValueError("is not a database URL, e.g. sqlite:////path/ledger.sqlite3") from None
        backend, driver = url.get_backend_name(), url.get_driver_name()
        if backend not in ("sqlite", "postgresql"):
            raise ValueError(f"names backend {backend!r}: use sqlite or postgresql")
        if backend == "postgresql" and "+" not in url.drivername:
            # postgresql:// alone means psycopg2, which is not installed: the driver that is.
            return url.set(drivername=POSTGRES_DRIVER).render_as_string(hide_password=False)
        if backend == "postgresql" and url.drivername != POSTGRES_DRIVER:
            raise ValueError(
                f"names driver {driver!r}, which is not installed: use postgresql+psycopg://"
            )
        return value

    user: str | None = Field(
        default=None,
        description="The embedded sandbox only (no money moves): who acts without `payflow "
        "login`; unset: the OS user. Names nobody anywhere else.",
    )
    session_hours: float = Field(
        default=8.0, gt=0, le=24, description="Hours a `payflow login` session lasts."
    )

    shared_group: str | None = Field(
        default=None,
        description="OS group that shares the ledger, reports and logs payflow creates (0660, "
        "folders 02770); unset: owner-only (0600/0700). See docs/multi-user.md.",
    )

    @field_validator("shared_group")
    @classmethod
    def _shared_group_exists(cls, value: str | None) -> str | None:
        if not value:
            return None
        from payflow.file_access import shared_group_id

        shared_group_id(value)  # a ValueError saying what to do: one line naming the setting
        return value

    notify: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Where payflow tells people (approval needed or expiring, unpaid rows, "
        "findings, crashed runs, failed inbox files): apprise URLs separated by spaces or commas "
        "(mailto://, json://, slack://, tgram://...), each for every message or, prefixed with "
        "audiences, for theirs only (checkers=, makers=, operations=, joined with +); a mail "
        "URL tagged people= also mails each operator at their own address (payflow console "
        "set-notify); unset: nobody is told.",
    )
    watchdog_deployment: str = Field(
        default="pay-batch/pay-batch",
        description="The deployment the watchdog starts a resuming pay run of (FLOW/DEPLOYMENT).",
    )
    run_stale_after: float = Field(
        default=60.0,
        description="Seconds a pay run may go unheard before it counts as dead (the watchdog "
        "resumes its batch, the daily run replaces it, a console offers to go on); a run beats "
        f"every sixth of it. At least {RUN_STALE_AFTER_FLOOR:g}. Each run's beat records its "
        "window, and a reader waits the longer of that and its own.",
    )

    @field_validator("run_stale_after")
    @classmethod
    def _run_stale_after_has_room(cls, value: float) -> float:
        if not value >= RUN_STALE_AFTER_FLOOR:  # also refuses nan
            raise ValueError(
                f"{value:g} s is too short: at least {RUN_STALE_AFTER_FLOOR:g} (a run beats every "
                "sixth of it; a beat a loaded machine delays must not read a live run dead)"
            )
        return value

    @field_validator("notify", mode="before")
    @classmethod
    def _notify_is_a_list(cls, value: object) -> object:
        if isinstance(value, str):
            value = [url for url in value.replace(",", " ").split() if url]
        if isinstance(value, list):
            from payflow.notify import receiver

            for entry in value:
                receiver(str(entry))  # a ValueError naming the audiences allowed
        return value

    @property
    def run_stale_window(self) -> timedelta:
        """How long a pay run may go unheard before it counts as dead."""
        return timedelta(seconds=self.run_stale_after)

    @property
    def run_beat_seconds(self) -> float:
        """How often a live pay run beats: six beats in the window, so one late is no death."""
        return self.run_stale_after / BEATS_PER_WINDOW

    @property
    def uses_sandbox(self) -> bool:
        """True when no real API is configured: no real money can move."""
        return self.api_url is None

    def ledger_url_or_default(self) -> str:
        """The ledger URL, defaulting to a SQLite file under `home`."""
        if self.ledger_url:
            return self.ledger_url
        return f"sqlite:///{(self.home / 'ledger.sqlite3').resolve()}"

    @property
    def ledger_place(self) -> str:
        """Where the ledger is, for a message: its folder, or the setting (never the URL, which
        may hold a password)."""
        return "at PAYFLOW_LEDGER_URL" if self.ledger_url else f"at {self.home.resolve()}"

    def reports_dir(self) -> Path:
        """The local folder of reports under `home` (when `reports_url` names none)."""
        return (self.home / "reports").resolve()

    def reports_location(self) -> str:
        """Where run reports go unless `--out` says otherwise: `reports_url`, a folder or a
        storage URL (payflow.storage), else `reports_dir()`."""
        if self.reports_url:
            from payflow.storage import is_remote

            url = self.reports_url.strip()
            return url if is_remote(url) else str(Path(url).expanduser().resolve())
        return str(self.reports_dir())
