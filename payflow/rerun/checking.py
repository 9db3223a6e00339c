"""Corrections are checked by the batch rules with the service's banks and services lists, the
same way for the command line, a deployed rerun and the console."""

from __future__ import annotations

from payflow.api import AsyncPayoutsClient
from payflow.intake import RawBatch, ValidationReport
from payflow.intake.lookups import fetch_lookups, prefetched
from payflow.schemas.lookups import sbp_phones
from payflow.schemas.validation import validate_rows


async def validate_with_lookups(client: AsyncPayoutsClient, raw: RawBatch) -> ValidationReport:
    """`validate_rows` of `raw` with the services list and the banks of its SBP phones."""
    lookups = await fetch_lookups(client, sbp_phones(raw))
    return validate_rows(raw, services=lookups.services, banks_for_phones=prefetched(lookups.banks))
