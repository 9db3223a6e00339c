"""Typed client of the payments service: models, the error tree, signing, webhooks, throttling."""

from payflow.api.async_client import AsyncPayoutsClient
from payflow.api.client import PayoutsClient
from payflow.api.retry import RetryPolicy
from payflow.api.throttle import Throttle

__all__ = ["AsyncPayoutsClient", "PayoutsClient", "RetryPolicy", "Throttle"]
