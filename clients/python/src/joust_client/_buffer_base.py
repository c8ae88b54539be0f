"""The caller's side of a buffer, the same for the sync and async forms: adding items (never
blocking, refusing when full) and reading the counters."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from ._bodies import Ordering, clicks_body, outcome_body
from ._buffer_state import BufferState
from .models import Duel, Interleaving


class BufferBase:
    _state: BufferState
    _closed: bool

    def add_outcome(
        self,
        duel: Duel,
        *,
        winner: str | None = None,
        credits: Mapping[str, float] | None = None,
        ordering: Ordering | None = None,
    ) -> bool:
        """Queue a duel's outcome. False (counted in `dropped`) when the buffer is full or
        closed; True with nothing queued for a duel without a token (nothing to record)."""
        body = outcome_body(duel, winner, credits, ordering)
        if body is None:
            return True
        return self._add(self._state.outcomes, body)

    def add_clicks(
        self,
        shown: Interleaving,
        *,
        clicked: Sequence[str] | None = None,
        click_positions: Sequence[int] | None = None,
    ) -> bool:
        """Queue the clicks on a shown list, as `add_outcome` does an outcome."""
        body = clicks_body(shown, clicked, click_positions)
        if body is None:
            return True
        return self._add(self._state.clicks, body)

    def _add(self, queue: deque[dict[str, Any]], body: dict[str, Any]) -> bool:
        state = self._state
        if self._closed:
            with state.lock:
                state.dropped += 1
            return False
        if not state.add(queue, body):
            return False
        if len(queue) >= state.batch_limit:
            self._wake()
        return True

    def _wake(self) -> None:
        raise NotImplementedError

    @property
    def pending(self) -> int:
        """Items not yet acknowledged by the service (being sent ones included)."""
        return self._state.pending

    @property
    def recorded(self) -> int:
        """Items the service recorded."""
        return self._state.recorded

    @property
    def duplicates(self) -> int:
        """Items the service had already recorded (a retry after a lost answer)."""
        return self._state.duplicates

    @property
    def rejected(self) -> int:
        """Items the service refused for good (a 4xx); `on_error` was called for each."""
        return self._state.rejected

    @property
    def dropped(self) -> int:
        """Items refused by `add_*` because the buffer was full or closed."""
        return self._state.dropped

    @property
    def send_failures(self) -> int:
        """Sends that got no final answer (no answer, 503, 5xx) and were retried after a wait."""
        return self._state.send_failures
