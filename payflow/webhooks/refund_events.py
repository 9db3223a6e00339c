"""REFUND_UPDATE and ORDER_UPDATE webhooks: recorded on the ledger's refund rows, forward only.

The signature is checked by the receiver before this runs (and again by the parser)."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from pydantic import SecretStr

from payflow.api.webhooks import parse_order_webhook, parse_refund_webhook
from payflow.ledger import EventSource, IllegalTransition, Ledger, LedgerError, UnknownRefund

logger = logging.getLogger(__name__)

REFUND_UPDATE = "REFUND_UPDATE"
ORDER_UPDATE = "ORDER_UPDATE"
REFUND_KINDS = frozenset({REFUND_UPDATE, ORDER_UPDATE})


def record_refund_webhook(
    ledger: Ledger, kind: str, body: bytes, headers: Mapping[str, str], token: SecretStr
) -> bool:
    """Record one refund or order event; False when nothing moved or it is not ours."""
    secret = token.get_secret_value()
    try:
        if kind == ORDER_UPDATE:
            order = parse_order_webhook(body, headers, secret)
            if order.order_id is None:
                return False
            moved = ledger.refunds.record_order_status(
                order.order_id, order.status, source=EventSource.WEBHOOK
            )
            return moved > 0
        event = parse_refund_webhook(body, headers, secret)
        data = event.data
        return ledger.refunds.record_status(
            external_id=event.external_id,
            refund_id=event.refund_id,
            status=event.status,
            source=EventSource.WEBHOOK,
            status_message=event.status_message,
            # Every field the service sent, whichever channel brought it: the refund report
            # read a blank debitAmount where the first news came by webhook.
            debit_amount=event.debit_amount,
            debit_currency=data.get("debitCurrency"),
            debit_basis=data.get("debitBasis"),
        )
    except ValueError:
        logger.warning("signed %s webhook with an unreadable body ignored", kind)
        return False
    except UnknownRefund:
        logger.info("%s webhook for a refund not in this ledger; ignored", kind)
        return False
    except (IllegalTransition, LedgerError) as exc:
        logger.error("%s webhook not recorded: %s", kind, exc)
        return False
