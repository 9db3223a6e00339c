"""The one settings object: environment variables (PAYFLOW_*) and an optional `.env` file.

Nothing reads the environment at import time; build `Settings()` where a command starts, or
`Settings(api_url=..., ...)` in a test.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

SANDBOX_TOKEN_DEFAULT = "sandbox-secret-token"


class Settings(BaseSettings):
    """Everything payflow can be configured with; see README "Settings"."""

    model_config = SettingsConfigDict(
        env_prefix="PAYFLOW_", env_file=".env", extra="ignore", frozen=True
    )

    api_url: str | None = Field(
        default=None, description="Base URL of the payments API; unset: the embedded sandbox."
    )
    api_token: SecretStr | None = Field(default=None, description="Merchant API token.")
    ledger_url: str | None = Field(
        default=None, description="SQLAlchemy URL of the ledger; unset: SQLite under home."
    )
    home: Path = Field(default=Path(".payflow"), description="Ledger file, reports, Prefect home.")
    webhook_url: str | None = Field(
        default=None, description="Public URL of `payflow webhooks`, sent as callbackUrl."
    )
    max_in_flight: int = Field(default=16, ge=1, le=512, description="Requests in flight.")
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

    approvals_file: Path | None = Field(
        default=None, description="Approval rules per currency; unset: data/approvals.yaml."
    )
    approver: str | None = Field(
        default=None,
        description="Who `payflow approve` records; unset: the OS user. For tests only.",
    )

    @property
    def uses_sandbox(self) -> bool:
        """True when no real API is configured: no real money can move."""
        return self.api_url is None

    def ledger_url_or_default(self) -> str:
        """The ledger URL, defaulting to a SQLite file under `home`."""
        if self.ledger_url:
            return self.ledger_url
        return f"sqlite:///{(self.home / 'ledger.sqlite3').resolve()}"

    def reports_dir(self) -> Path:
        """Where run reports go unless `--out` says otherwise."""
        return (self.home / "reports").resolve()
