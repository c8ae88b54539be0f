"""The background outcome buffer of the async client: an asyncio task sends what is queued."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import time
from collections.abc import Callable
from typing import Any

import httpx

from ._backoff import backoff_delay
from ._buffer_base import BufferBase
from ._buffer_state import BufferState, OnError
from ._senders import AsyncSender, SyncSender


class AsyncOutcomeBuffer(BufferBase):
    """`OutcomeBuffer` for asyncio: the same guarantees, sent by a task on the running loop.

    `add_outcome` and `add_clicks` are plain (non-async) calls, made from the loop's thread;
    the first one starts the task. `await close()` (or leaving `async with`) sends what is
    pending. If the process exits with the buffer still open, an atexit hook sends what is
    left over a fresh synchronous connection, within `close_timeout`.
    """

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        http_options: dict[str, Any],
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
        self._sender = AsyncSender(self._state, http, click_concurrency)
        self._http_options = http_options
        self._click_concurrency = click_concurrency
        self._flush_interval = flush_interval
        self._close_timeout = close_timeout
        self._backoff: Callable[[int, float | None], float] = lambda attempt, retry_after: (
            backoff_delay(attempt, retry_backoff, retry_backoff_cap, retry_after)
        )
        self._closed = False
        self._closing = False
        self._wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        atexit.register(self._drain_at_exit)

    def _wake(self) -> None:
        self._wakeup.set()

    def _add(self, queue: Any, body: dict[str, Any]) -> bool:
        if self._task is None and not self._closed:
            self.start()
        return super()._add(queue, body)

    def start(self) -> None:
        """Start the sending task on the running loop (the first add does it too)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        attempt = 0
        while True:
            if not self._closing:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self._wakeup.wait(), self._flush_interval)
                self._wakeup.clear()
            try:
                failure = await self._sender.flush_once()
            except Exception:  # noqa: BLE001 - the task must outlive any surprise
                failure = None
                await asyncio.sleep(self._backoff(attempt, None))
            if failure is None:
                attempt = 0
                if self._closing and self._state.pending == 0:
                    return
                continue
            with self._state.lock:
                self._state.send_failures += 1
            await asyncio.sleep(self._backoff(attempt, failure.retry_after))
            attempt += 1

    async def flush(self, timeout: float | None = None) -> bool:
        """Send what is pending now and wait until nothing is; False if `timeout` passed first."""
        if self._state.pending and self._task is None:
            self.start()
        self._wakeup.set()
        due = None if timeout is None else time.monotonic() + timeout
        while self._state.pending:
            if due is not None and time.monotonic() >= due:
                return False
            await asyncio.sleep(0.01)
        return True

    async def close(self, timeout: float | None = None) -> bool:
        """Stop taking items and send what is pending, waiting at most `timeout` seconds
        (`close_timeout` when None). True when everything was acknowledged."""
        self._closed = True
        self._closing = True
        if self._task is None and self._state.pending:
            self.start()
        self._wakeup.set()
        if self._task is not None and not self._task.done():
            try:
                await asyncio.wait_for(
                    asyncio.shield(self._task),
                    self._close_timeout if timeout is None else timeout,
                )
            except asyncio.TimeoutError:
                self._task.cancel()
        atexit.unregister(self._drain_at_exit)
        return self._state.pending == 0

    def _drain_at_exit(self) -> None:
        # The loop is gone by now: send what is left synchronously.
        if self._state.pending == 0:
            return
        due = time.monotonic() + self._close_timeout
        with httpx.Client(**self._http_options) as http:
            sender = SyncSender(self._state, http, self._click_concurrency)
            attempt = 0
            while self._state.pending and time.monotonic() < due:
                failure = sender.flush_once()
                if failure is not None:
                    wait = min(self._backoff(attempt, failure.retry_after), due - time.monotonic())
                    time.sleep(max(wait, 0.0))
                    attempt += 1
            sender.close()

    async def __aenter__(self) -> AsyncOutcomeBuffer:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
