"""The background outcome buffer of the sync client: a thread sends what the caller queues."""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable

import httpx

from ._backoff import backoff_delay
from ._buffer_base import BufferBase
from ._buffer_state import BufferState, OnError, PendingItem
from ._senders import SyncSender

__all__ = ["OnError", "OutcomeBuffer", "PendingItem"]


class OutcomeBuffer(BufferBase):
    """Queues outcomes and clicks and sends them from a background thread.

    `add_outcome` and `add_clicks` never block: they append to a queue of at most
    `max_pending` items and return False (counting `dropped`) when it is full. The thread sends
    outcomes in batches of up to `max_batch` (at most 10,000, the service's limit) every
    `flush_interval` seconds, or as soon as a batch is full, and clicks one request each, up to
    `click_concurrency` at once. After a 503 (honouring `Retry-After`), a 5xx or no answer it
    waits (exponential backoff with jitter, from `retry_backoff` up to `retry_backoff_cap`) and
    sends the same items again: the service records each duel's outcome exactly once, so an item
    whose answer was lost comes back "duplicate" and counts once. An item leaves the queue only
    when the service acknowledged it: recorded, duplicate, or refused with a 4xx, which is final
    (counted in `rejected` and passed to `on_error`).

    `close()` (also on leaving a `with` block, and at interpreter exit) sends what is pending,
    waiting at most `close_timeout` seconds.
    """

    def __init__(
        self,
        http: httpx.Client,
        *,
        max_pending: int = 100_000,
        max_batch: int = 1_000,
        flush_interval: float = 0.5,
        click_concurrency: int = 4,
        close_timeout: float = 30.0,
        retry_backoff: float = 0.1,
        retry_backoff_cap: float = 10.0,
        on_error: OnError | None = None,
    ) -> None:
        self._state = BufferState(max_pending, max_batch, on_error)
        self._sender = SyncSender(self._state, http, click_concurrency)
        self._flush_interval = flush_interval
        self._close_timeout = close_timeout
        self._backoff: Callable[[int, float | None], float] = lambda attempt, retry_after: (
            backoff_delay(attempt, retry_backoff, retry_backoff_cap, retry_after)
        )
        self._closed = False
        self._wakeup = threading.Event()
        self._closing = threading.Event()
        self._abandon = threading.Event()
        # A daemon thread, so that an unreachable service cannot keep the process alive; the
        # atexit hook gives it `close_timeout` to deliver first.
        self._thread = threading.Thread(target=self._run, name="joust-outcome-buffer", daemon=True)
        self._thread.start()
        atexit.register(self._close_at_exit)

    def _wake(self) -> None:
        self._wakeup.set()

    def _run(self) -> None:
        attempt = 0
        while True:
            if not self._closing.is_set():
                self._wakeup.wait(self._flush_interval)
                self._wakeup.clear()
            try:
                failure = self._sender.flush_once()
            except Exception:  # noqa: BLE001 - the thread must outlive any surprise
                failure = None
                self._abandon.wait(self._backoff(attempt, None))
            if failure is None:
                attempt = 0
                if self._closing.is_set() and self._state.pending == 0:
                    return
                continue
            with self._state.lock:
                self._state.send_failures += 1
            if self._abandon.wait(self._backoff(attempt, failure.retry_after)):
                return
            attempt += 1

    def flush(self, timeout: float | None = None) -> bool:
        """Send what is pending now and wait until nothing is; False if `timeout` passed first."""
        self._wakeup.set()
        return self._state.wait_settled(timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Stop taking items and send what is pending, waiting at most `timeout` seconds
        (`close_timeout` when None). True when everything was acknowledged; otherwise the items
        left are still counted in `pending` and will not be sent."""
        if not self._closed:
            self._closed = True
            atexit.unregister(self._close_at_exit)
            self._closing.set()
            self._wakeup.set()
        self._thread.join(self._close_timeout if timeout is None else timeout)
        if self._thread.is_alive():
            self._abandon.set()
        else:
            self._sender.close()
        return self._state.pending == 0

    def _close_at_exit(self) -> None:
        self.close()

    def __enter__(self) -> OutcomeBuffer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
