"""Minting the signed widget link at the moment a recipient opens a claim.

Only the documented payload fields, `expiresAt` 30 minutes ahead, signed with the API token by
`payflow.api.signing.widget_link`. The result goes into a redirect and nowhere else.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from pydantic import SecretStr

from payflow.api.signing import widget_link
from payflow.api.widget import WidgetPayload
from payflow.links.records import CURRENCY, ClaimLookup

LINK_LIFETIME = timedelta(minutes=30)


def widget_payload(claim: ClaimLookup, merchant_id: str, now: datetime) -> WidgetPayload:
    """The payload of one claim's widget link."""
    return WidgetPayload.model_validate(
        {
            "merchantId": merchant_id,
            "userId": claim.user_id,
            "amount": claim.amount,
            "currency": CURRENCY,
            "externalId": claim.external_id,
            "serviceId": claim.service_id,
            "expiresAt": int((now + LINK_LIFETIME).timestamp()),
        },
        context={"now": now},
    )


def mint_link(
    claim: ClaimLookup, *, merchant_id: str, token: SecretStr, widget_url: str, now: datetime
) -> str:
    """`{widget_url}/payout-widget?payload=...&signature=...`; never log it."""
    return widget_link(widget_url, widget_payload(claim, merchant_id, now), token)
