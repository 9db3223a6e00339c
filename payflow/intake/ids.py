"""The externalId of a row that has none: one function for payout and refund batches alike."""

from __future__ import annotations

DERIVED_ID_HEX = 12


def derived_external_id(batch_id: str, row: int) -> str:
    """`pf-<12 hex of the batch id>-<row>`: a re-upload of the same file maps to the same ids."""
    return f"pf-{batch_id[:DERIVED_ID_HEX]}-{row}"
