"""The non-secret knobs of paying a batch, as flow parameters that default from settings."""

from __future__ import annotations

from dataclasses import dataclass

from payflow.settings import Settings

DEFAULT_LANES = 2


@dataclass(frozen=True, slots=True)
class PayKnobs:
    """How a pay run submits and how long it follows payouts; a deployment may set each."""

    chunk_size: int
    max_in_flight: int
    track_deadline: float
    poll_interval: float
    poll_max_interval: float
    quiet_period: float
    lanes: int = DEFAULT_LANES

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        chunk_size: int | None = None,
        max_in_flight: int | None = None,
        track_deadline: float | None = None,
        poll_interval: float | None = None,
    ) -> PayKnobs:
        """The settings' values, each overridden by a parameter that is not None."""
        return cls(
            chunk_size=chunk_size or settings.chunk_size,
            max_in_flight=max_in_flight or settings.max_in_flight,
            track_deadline=track_deadline
            if track_deadline is not None
            else settings.track_deadline,
            poll_interval=poll_interval or settings.poll_interval,
            poll_max_interval=settings.poll_max_interval,
            quiet_period=settings.track_quiet_period,
        )
