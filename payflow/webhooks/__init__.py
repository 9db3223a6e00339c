"""The signed-webhook receiver (`payflow webhooks`): verify, record in the ledger, answer fast."""

from payflow.webhooks.app import WEBHOOK_PATH, create_receiver_app
from payflow.webhooks.server import WebhookReceiver

__all__ = ["WEBHOOK_PATH", "WebhookReceiver", "create_receiver_app"]
