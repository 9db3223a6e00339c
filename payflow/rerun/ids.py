"""Deterministic ids of rerun attempts and rerun batches."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from payflow.ledger.tables import BATCH_ID_LENGTH, EXTERNAL_ID_LENGTH

ROOT_HASH_HEX = 40


def attempt_external_id(root: str, attempt: int) -> str:
    """`<root>-r<n>`; when that would pass 255 characters, `rr-<sha256 of root>-r<n>`."""
    if attempt < 1:
        raise ValueError("a rerun attempt is numbered from 1")
    plain = f"{root}-r{attempt}"
    if len(plain) <= EXTERNAL_ID_LENGTH:
        return plain
    digest = hashlib.sha256(root.encode("utf-8")).hexdigest()[:ROOT_HASH_HEX]
    return f"rr-{digest}-r{attempt}"


def rerun_batch_id(batch_id: str, new_external_ids: Iterable[str]) -> str:
    """`<batch>-rerun-<12 hex>` from the new attempts' ids: the same rerun gets the same id."""
    digest = hashlib.sha256("\n".join(sorted(new_external_ids)).encode("utf-8")).hexdigest()
    suffix = f"-rerun-{digest[:12]}"
    return batch_id[: BATCH_ID_LENGTH - len(suffix)] + suffix
