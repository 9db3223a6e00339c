"""The claims file: one claim URL per row, never overwritten, readable by its owner only (0600;
0660 with PAYFLOW_SHARED_GROUP).

It is the only place a claim token is ever written; the ledger keeps its SHA-256.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from payflow.atomic import created
from payflow.file_access import make_folder
from payflow.inert import inert_text
from payflow.links.records import CURRENCY, IssuedClaim
from payflow.schemas.iso4217 import amount_text

CLAIM_PATH = "/claim/"
HEADER = ("row", "externalId", "userId", "amount", "expiresAt", "claimUrl")


def claim_url(base_url: str, token: str) -> str:
    """The merchant's own address for one claim: `{base}/claim/{token}`."""
    return f"{base_url.rstrip('/')}{CLAIM_PATH}{token}"


def write_claims_file(
    out_dir: Path, batch_id: str, claims: Sequence[IssuedClaim], base_url: str, now: datetime
) -> Path:
    """Write the claim URLs as CSV with mode 0600; a new file each time (never overwrites)."""
    make_folder(out_dir)
    path = out_dir / f"{batch_id}-claims-{now.strftime('%Y%m%dT%H%M%S%fZ')}.csv"
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    for claim in claims:
        writer.writerow(
            (
                claim.row_number,
                inert_text(claim.external_id),
                inert_text(claim.user_id),
                amount_text(claim.amount, CURRENCY),
                claim.expires_at.isoformat(timespec="seconds"),
                claim_url(base_url, claim.token),
            )
        )
    # Owner-only (or the shared group's) from its creation (never readable by others, not even
    # for a moment), new (never over an earlier claims file) and whole (a full disk leaves no
    # half file).
    # With a BOM, as every CSV payflow writes: Excel read a Cyrillic userId without one as
    # mojibake, and the operator matches each line to its recipient by it.
    with (
        created(path) as part,
        part.open("w", encoding="utf-8-sig", newline="") as handle,
    ):
        handle.write(buffer.getvalue())
    return path
