"""How long to wait before sending a request again."""

from __future__ import annotations

import random


def backoff_delay(attempt: int, base: float, cap: float, retry_after: float | None = None) -> float:
    """Exponential backoff with full jitter, never shorter than the service's `Retry-After`.

    Full jitter (a uniform draw up to the exponential bound) spreads the retries of many
    processes that lost the service at the same moment, so they do not come back in step.
    """
    bound = min(cap, base * (2 ** min(attempt, 30)))
    delay = random.uniform(bound / 2, bound)
    if retry_after is not None:
        delay = max(delay, min(retry_after, cap))
    return delay
