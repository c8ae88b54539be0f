"""Sending a buffer's pending items: outcomes in batches, clicks one request each (the service
has no batch of clicks) a few at a time. One sync and one async form of the same steps."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from ._buffer_state import BufferState, Result, SendFailure
from ._responses import as_joust_error, error_from_response, error_from_transport
from .errors import JoustError
from .models import ClickResult, item_result

# How many clicks are taken from the queue per round, per concurrent request.
_CLICKS_PER_WORKER = 8


def _batch_results(response: httpx.Response) -> list[Result]:
    return [item_result(item) for item in json.loads(response.content)["results"]]


def _click_result(response: httpx.Response) -> Result:
    if response.status_code == 200:
        return ClickResult.from_json(json.loads(response.content))
    return error_from_response(response)


def _first_retryable(results: Sequence[Result]) -> JoustError:
    for result in results:
        if isinstance(result, JoustError) and result.retryable:
            return result
    raise AssertionError("no retryable result")


def _after_batch_error(
    state: BufferState, batch: list[dict[str, Any]], error: JoustError
) -> SendFailure | None:
    """What a whole batch's error answer means: wait and retry, split it, or refuse it."""
    if error.retryable:
        return SendFailure(error)
    if error.status == 413 and len(batch) > 1:
        state.batch_limit = max(1, len(batch) // 2)
        return None
    state.reject_all("outcome", state.outcomes, batch, error)
    return None


class SyncSender:
    def __init__(self, state: BufferState, http: httpx.Client, click_concurrency: int) -> None:
        self._state = state
        self._http = http
        self._click_concurrency = max(1, click_concurrency)
        self._pool: ThreadPoolExecutor | None = None

    def flush_once(self) -> SendFailure | None:
        """Send everything pending once; the failure that stopped it, if any."""
        outcome_failure = self._send_outcomes()
        click_failure = self._send_clicks()
        return outcome_failure or click_failure

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def _send_outcomes(self) -> SendFailure | None:
        state = self._state
        while batch := state.head(state.outcomes, state.batch_limit):
            try:
                response = self._http.post("/v1/outcomes/batch", json={"outcomes": batch})
                if response.status_code != 200:
                    failure = _after_batch_error(state, batch, error_from_response(response))
                    if failure:
                        return failure
                    continue
                results = _batch_results(response)
            except Exception as exc:  # noqa: BLE001 - any failure means: send again later
                return SendFailure(as_joust_error(exc))
            if state.settle("outcome", state.outcomes, batch, results):
                return SendFailure(_first_retryable(results))
        return None

    def _send_clicks(self) -> SendFailure | None:
        state = self._state
        while batch := state.head(state.clicks, self._click_concurrency * _CLICKS_PER_WORKER):
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    self._click_concurrency, thread_name_prefix="joust-clicks"
                )
            results = list(self._pool.map(self._post_click, batch))
            if state.settle("clicks", state.clicks, batch, results):
                return SendFailure(_first_retryable(results))
        return None

    def _post_click(self, body: dict[str, Any]) -> Result:
        try:
            return _click_result(self._http.post("/v1/clicks", json=body))
        except httpx.HTTPError as exc:
            return error_from_transport(exc)
        except Exception as exc:  # noqa: BLE001 - a garbled answer: send again later
            return as_joust_error(exc)


class AsyncSender:
    def __init__(self, state: BufferState, http: httpx.AsyncClient, click_concurrency: int) -> None:
        self._state = state
        self._http = http
        self._click_concurrency = max(1, click_concurrency)

    async def flush_once(self) -> SendFailure | None:
        outcome_failure = await self._send_outcomes()
        click_failure = await self._send_clicks()
        return outcome_failure or click_failure

    async def _send_outcomes(self) -> SendFailure | None:
        state = self._state
        while batch := state.head(state.outcomes, state.batch_limit):
            try:
                response = await self._http.post("/v1/outcomes/batch", json={"outcomes": batch})
                if response.status_code != 200:
                    failure = _after_batch_error(state, batch, error_from_response(response))
                    if failure:
                        return failure
                    continue
                results = _batch_results(response)
            except Exception as exc:  # noqa: BLE001 - any failure means: send again later
                return SendFailure(as_joust_error(exc))
            if state.settle("outcome", state.outcomes, batch, results):
                return SendFailure(_first_retryable(results))
        return None

    async def _send_clicks(self) -> SendFailure | None:
        state = self._state
        limit = asyncio.Semaphore(self._click_concurrency)

        async def post(body: dict[str, Any]) -> Result:
            async with limit:
                try:
                    return _click_result(await self._http.post("/v1/clicks", json=body))
                except httpx.HTTPError as exc:
                    return error_from_transport(exc)
                except Exception as exc:  # noqa: BLE001 - a garbled answer: send again later
                    return as_joust_error(exc)

        while batch := state.head(state.clicks, self._click_concurrency * _CLICKS_PER_WORKER):
            results = await asyncio.gather(*(post(body) for body in batch))
            if state.settle("clicks", state.clicks, batch, results):
                return SendFailure(_first_retryable(results))
        return None
