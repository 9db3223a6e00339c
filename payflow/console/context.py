"""What every console page works with: settings, the ledger, where payouts go, and the limits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from payflow.connections import RunTarget
from payflow.console.kept_uploads import KeptUploads
from payflow.console.signin_limits import SignInLimits
from payflow.ledger import Ledger
from payflow.settings import Settings
from payflow.storage import Storage, storage_at

MAX_UPLOAD_BYTES = 10 * 1024 * 1024
ACCEPTED_SUFFIXES = (".csv", ".xlsx")


@dataclass
class ConsoleContext:
    """One console process: the ledger it reads and writes and the API its payouts go to."""

    settings: Settings
    ledger: Ledger
    target: RunTarget
    max_upload_bytes: int = MAX_UPLOAD_BYTES
    page_size: int = 20
    prefect_deployment: str = "pay-batch/pay-batch"
    # None: through the deployment when PREFECT_API_URL is configured; False: always in-process.
    pay_through_prefect: bool | None = None
    # The Prefect server in-process pay runs use (`start_local_prefect`); None: start it then.
    prefect_api_url: str | None = None
    extra: dict[str, object] = field(default_factory=dict)
    # Failed sign-ins per name and address; a test gives one with its own clock.
    signin_limits: SignInLimits = field(default_factory=SignInLimits)
    # Workbooks kept while their maker chooses a sheet; None: in `kept_uploads_dir()`.
    kept_uploads: KeptUploads | None = None

    def kept_uploads_dir(self) -> Path:
        """Where workbooks wait for their sheet choice (never served; see kept_uploads)."""
        return self.settings.home / "console-uploads"

    def batch_dir(self, batch_id: str) -> Storage:
        """Where the console keeps a batch's rejects and reports (never named in a URL): under
        the reports' folder or storage URL (PAYFLOW_REPORTS_URL)."""
        return storage_at(self.settings.reports_location()).child(f"console/{batch_id}")

    def reports(self) -> Storage:
        """Where the runs write their reports (PAYFLOW_REPORTS_URL, or under home)."""
        return storage_at(self.settings.reports_location())
