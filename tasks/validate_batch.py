"""Validating a read batch as a Prefect task (the work is in `payflow.schemas.validation`)."""

from __future__ import annotations

from collections.abc import Sequence

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.intake import RawBatch, ValidationReport
from payflow.intake.lookups import BanksForPhones, ServiceInfo
from payflow.schemas.validation import validate_rows


@task(name="validate-batch", cache_policy=NO_CACHE)
def validate_batch(
    raw: RawBatch,
    *,
    services: Sequence[ServiceInfo] | None,
    banks_for_phones: BanksForPhones | None,
    strict: bool = False,
) -> ValidationReport:
    """Prefect task over `validate_rows`."""
    return validate_rows(raw, services=services, banks_for_phones=banks_for_phones, strict=strict)
