"""An overall deadline for one request, enforced in every phase of it.

httpx's `Timeout` bounds each phase (pool, connect, write, read) separately, so a request whose
phases each come close to the limit takes a multiple of it. httpcore reads the request's
`timeout` extension afresh at the start of each phase; giving it a mapping that answers with the
time left until the deadline makes every phase share one budget. The callers also check the
clock once the answer is in, and async callers wrap the whole request in a hard timeout.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")

# A phase that starts with no time left still gets this much, so that the socket call raises a
# timeout instead of switching to non-blocking mode (which a timeout of 0 means).
_LEAST_PHASE_SECONDS = 1e-4

_PHASES = frozenset(("pool", "connect", "read", "write"))


class DeadlineTimeouts(dict[str, Any]):
    """The `timeout` request extension for a request due by `due` (a `time.monotonic()` value)."""

    __slots__ = ("due",)

    def __init__(self, due: float) -> None:
        super().__init__()
        self.due = due

    def get(self, key: str, default: Any = None) -> Any:
        if key in _PHASES:
            return max(self.due - time.monotonic(), _LEAST_PHASE_SECONDS)
        return default

    def __getitem__(self, key: str) -> Any:
        if key in _PHASES:
            return self.get(key)
        raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return key in _PHASES


async def within(awaitable: Awaitable[T], due: float) -> T:
    """Await `awaitable`, cancelling it at `due` (raising TimeoutError): the hard guard that
    holds even where a phase's own timeout would let it overrun."""
    remaining = max(due - time.monotonic(), 0.0)
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(remaining):
            return await awaitable
    return await asyncio.wait_for(awaitable, remaining)
