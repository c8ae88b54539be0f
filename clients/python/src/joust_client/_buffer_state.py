"""What the sync and async outcome buffers share: the pending items, the counters, and how an
answer settles the items that were sent.

Items stay in their queue while they are being sent and leave it only once the service has
acknowledged them (recorded, duplicate, or refused with a final 4xx); an item whose answer
never came, or was a 503 or another 5xx, stays and is sent again. Only one sender removes
items, always from the head, so `add` can append at the tail at any time; the lock is held for
an append or a slice, never across a request, so `add` never waits on the network.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from .errors import JoustError
from .models import ClickResult, OutcomeResult

# The service takes at most this many outcomes in one batch request.
MAX_BATCH = 10_000


@dataclass(frozen=True, slots=True)
class PendingItem:
    """An item of the buffer, as `on_error` is given it: its kind and request body."""

    kind: Literal["outcome", "clicks"]
    body: dict[str, Any]


OnError = Callable[[PendingItem, JoustError], None]
Result = OutcomeResult | ClickResult | JoustError


@dataclass(slots=True)
class SendFailure:
    """A request that settled nothing (no answer, 503, 5xx): wait, then send it again."""

    error: JoustError

    @property
    def retry_after(self) -> float | None:
        return getattr(self.error, "retry_after", None)


class BufferState:
    def __init__(self, max_pending: int, max_batch: int, on_error: OnError | None) -> None:
        if max_pending < 1:
            raise ValueError("max_pending must be at least 1")
        if not 1 <= max_batch <= MAX_BATCH:
            raise ValueError(f"max_batch must be from 1 to {MAX_BATCH}")
        self.max_pending = max_pending
        self.max_batch = max_batch
        # Lowered when the service finds a batch too large (413), so the next one fits.
        self.batch_limit = max_batch
        self.on_error = on_error
        self.lock = threading.Lock()
        self.settled = threading.Condition(self.lock)
        self.outcomes: deque[dict[str, Any]] = deque()
        self.clicks: deque[dict[str, Any]] = deque()
        self.recorded = 0
        self.duplicates = 0
        self.rejected = 0
        self.dropped = 0
        self.send_failures = 0

    @property
    def pending(self) -> int:
        return len(self.outcomes) + len(self.clicks)

    def add(self, queue: deque[dict[str, Any]], body: dict[str, Any]) -> bool:
        """Append an item; False (and one more `dropped`) when the buffer is full."""
        with self.lock:
            if len(self.outcomes) + len(self.clicks) >= self.max_pending:
                self.dropped += 1
                return False
            queue.append(body)
            return True

    def head(self, queue: deque[dict[str, Any]], count: int) -> list[dict[str, Any]]:
        """The first `count` items, left in the queue until `settle` removes them."""
        with self.lock:
            return list(itertools.islice(queue, count))

    def settle(
        self,
        kind: Literal["outcome", "clicks"],
        queue: deque[dict[str, Any]],
        sent: Sequence[dict[str, Any]],
        results: Sequence[Result],
    ) -> int:
        """Remove the sent items (the queue's head) except those to send again; return how
        many are to be sent again."""
        final_errors: list[tuple[PendingItem, JoustError]] = []
        again: list[dict[str, Any]] = []
        with self.lock:
            for body, result in zip(sent, results, strict=True):
                if isinstance(result, JoustError):
                    if result.retryable:
                        again.append(body)
                    else:
                        self.rejected += 1
                        final_errors.append((PendingItem(kind, body), result))
                elif result.status == "duplicate":
                    self.duplicates += 1
                else:
                    self.recorded += 1
            for _ in sent:
                queue.popleft()
            queue.extendleft(reversed(again))
            self.settled.notify_all()
        self._report(final_errors)
        return len(again)

    def reject_all(
        self,
        kind: Literal["outcome", "clicks"],
        queue: deque[dict[str, Any]],
        sent: Sequence[dict[str, Any]],
        error: JoustError,
    ) -> None:
        """A final 4xx for a whole request: every item of it is refused for good."""
        self.settle(kind, queue, sent, [error] * len(sent))

    def _report(self, final_errors: list[tuple[PendingItem, JoustError]]) -> None:
        if self.on_error is None:
            return
        for item, error in final_errors:
            # The caller's callback must not stop the sender.
            with contextlib.suppress(Exception):
                self.on_error(item, error)

    def wait_settled(self, timeout: float | None) -> bool:
        """Wait until nothing is pending; False when `timeout` passed first."""
        with self.settled:
            return self.settled.wait_for(lambda: self.pending == 0, timeout)
