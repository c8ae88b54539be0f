"""The asyncio client: the same calls as `Client`, awaited."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

import httpx

from ._backoff import backoff_delay
from ._bodies import (
    Ordering,
    clicks_body,
    conversion_body,
    duel_body,
    fallback_rankers,
    interleave_body,
    local_interleaving,
    outcome_body,
    path_segment,
)
from ._buffer_state import OnError
from ._config import ClientConfig, experiment_body, history_params
from ._deadline import DeadlineTimeouts, within
from ._export import AsyncExportRows, data_frame, export_params
from ._responses import as_joust_error, error_from_response, error_from_transport, json_of
from .async_buffer import AsyncOutcomeBuffer
from .errors import JoustError, Timeout
from .models import (
    BatchResult,
    ClickResult,
    ConversionBatchResult,
    ConversionResult,
    Duel,
    Experiment,
    ExperimentPage,
    ExperimentSummary,
    History,
    Interleaving,
    Matrix,
    OutcomeResult,
    RankerRef,
)

T = TypeVar("T")


class AsyncClient:
    """An asyncio client of one joust service (see `Client` for the behaviour).

    `timeout` (seconds) bounds every call that has no deadline of its own. Calls that are safe
    to repeat (interleave, clicks, outcomes, reads) are sent again up to `retries` times after a
    503, a 5xx or no answer: the service records outcomes exactly once, so a retry of one that
    was in fact recorded answers "duplicate" and counts nothing.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        timeout: float = 5.0,
        retries: int = 2,
        retry_backoff: float = 0.05,
        retry_backoff_cap: float = 2.0,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self.config = ClientConfig(
            base_url, api_key, timeout, retries, retry_backoff, retry_backoff_cap
        )
        self._http = http_client or httpx.AsyncClient(**self.config.http_options())

    # -- the hot path --------------------------------------------------------------------

    async def duel(
        self,
        experiment_id: int,
        *,
        deadline: float | None = None,
        fallback: str | Sequence[str] | None = None,
        unit: str | None = None,
        query: str | None = None,
        segment: str | None = None,
    ) -> Duel:
        """The rankers to show for one query, within `deadline` seconds.

        With a `unit` (a user or session id; only a keyed hash of it is kept) and a `query`,
        the same unit and query get the same duel and list within the experiment's window;
        `segment` labels the query for the per-segment report.

        With a `fallback` (a ranker name, or several) this never raises: whatever goes wrong
        (no answer in time, no connection, a 5xx, even a 4xx such as an unknown experiment),
        it returns a duel of the fallback ranker(s) with `in_experiment` False and the reason
        in `fallback_reason`. Without one, it raises the typed error.
        """
        due = time.monotonic() + (self.config.timeout if deadline is None else deadline)
        try:
            response = await within(
                self._http.post(
                    f"/v1/experiments/{experiment_id}/duels",
                    json=duel_body(unit, query, segment),
                    extensions={"timeout": DeadlineTimeouts(due)},
                ),
                due,
            )
            if response.status_code != 200:
                raise error_from_response(response)
            duel = Duel.from_json(json_of(response))
            if time.monotonic() > due:
                # A late answer is worth less than a prompt fallback: the page is waiting.
                raise Timeout("the duel came after the deadline")
            return duel
        except Exception as exc:
            error = as_joust_error(exc)
            if fallback is None:
                raise error from exc
            return Duel.fallback(experiment_id, fallback_rankers(fallback), error.code, error)

    async def interleave(
        self,
        duel: Duel,
        lists: Mapping[str, Sequence[str]],
        *,
        deadline: float | None = None,
        page: int | None = None,
        offset: int | None = None,
    ) -> Interleaving:
        """The list to show for a duel, from each of its rankers' results.

        `page` (from 1) or `offset` asks for a later page of the same interleaving; post the
        clicks of every page shown with the deepest page's token.

        A duel without a token (a fallback, or a concluded experiment) needs no request: the
        first ranker's own list is shown. With a `deadline` this never raises: if the service
        does not answer in time, the first ranker's list is shown with `in_experiment` False.
        """
        if duel.token is None:
            return local_interleaving(duel, lists, duel.fallback_reason, None)
        body = interleave_body(duel, lists, page, offset)
        if deadline is None:
            return Interleaving.from_json(await self._post("/v1/interleavings", body, retry=True))
        due = time.monotonic() + deadline
        try:
            response = await within(
                self._http.post(
                    "/v1/interleavings", json=body, extensions={"timeout": DeadlineTimeouts(due)}
                ),
                due,
            )
            shown = Interleaving.from_json(json_of(response))
            if time.monotonic() > due:
                raise Timeout("the interleaving came after the deadline")
            return shown
        except Exception as exc:  # noqa: BLE001 - with a deadline, no failure reaches the page
            error = as_joust_error(exc)
            return local_interleaving(duel, lists, error.code, error)

    async def clicks(
        self,
        shown: Interleaving,
        *,
        clicked: Sequence[str] | None = None,
        click_positions: Sequence[int] | None = None,
    ) -> ClickResult | None:
        """Credit the clicks on a shown list and record the duel's outcome (exactly once).

        Give the clicked ids or their 0-based positions (an empty list: no click). Returns None
        with no request for a list made locally (nothing to record).
        """
        body = clicks_body(shown, clicked, click_positions)
        if body is None:
            return None
        return ClickResult.from_json(await self._post("/v1/clicks", body, retry=True))

    async def conversion(
        self,
        shown: Interleaving,
        metric: str,
        document: str,
        event_id: str,
        *,
        value: float | None = None,
    ) -> ConversionResult | None:
        """Record a later event (a purchase) on a shown document, exactly once per event id.

        `metric` is one of the experiment's conversion metrics; `value` weighs the event for a
        metric credited by value. Returns None with no request for a list made locally.
        """
        body = conversion_body(shown, metric, document, event_id, value)
        if body is None:
            return None
        return ConversionResult.from_json(await self._post("/v1/conversions", body, retry=True))

    async def conversion_batch(self, bodies: Sequence[Mapping[str, Any]]) -> ConversionBatchResult:
        """Record up to 1,000 conversions (bodies of `POST /v1/conversions`) in one request."""
        body = {"conversions": list(bodies)}
        return ConversionBatchResult.from_json(
            await self._post("/v1/conversions/batch", body, retry=True)
        )

    async def outcome(
        self,
        duel: Duel,
        *,
        winner: str | None = None,
        credits: Mapping[str, float] | None = None,
        ordering: Ordering | None = None,
    ) -> OutcomeResult | None:
        """Record a duel's outcome (exactly once): a `winner` (or "tie"), `credits` or `ordering`.

        Returns None with no request for a duel without a token (nothing to record).
        """
        body = outcome_body(duel, winner, credits, ordering)
        if body is None:
            return None
        return OutcomeResult.from_json(await self._post("/v1/outcomes", body, retry=True))

    async def outcome_batch(self, bodies: Sequence[Mapping[str, Any]]) -> BatchResult:
        """Record up to 10,000 outcomes (bodies of `POST /v1/outcomes`) in one request."""
        body = {"outcomes": list(bodies)}
        return BatchResult.from_json(await self._post("/v1/outcomes/batch", body, retry=True))

    def outcome_buffer(
        self,
        *,
        max_pending: int = 100_000,
        max_batch: int = 1_000,
        flush_interval: float = 0.5,
        click_concurrency: int = 4,
        close_timeout: float = 30.0,
        retry_backoff: float = 0.1,
        retry_backoff_cap: float = 10.0,
        on_error: OnError | None = None,
    ) -> AsyncOutcomeBuffer:
        """A background sender of outcomes and clicks; see `AsyncOutcomeBuffer`."""
        return AsyncOutcomeBuffer(
            self._http,
            http_options=self.config.http_options(),
            max_pending=max_pending,
            max_batch=max_batch,
            flush_interval=flush_interval,
            click_concurrency=click_concurrency,
            close_timeout=close_timeout,
            retry_backoff=retry_backoff,
            retry_backoff_cap=retry_backoff_cap,
            on_error=on_error,
        )

    # -- experiments ---------------------------------------------------------------------

    async def create_experiment(
        self,
        name: str,
        rankers: list[str],
        *,
        policy: str | dict[str, Any] | None = None,
        attribution_window_secs: int | None = None,
        seed: int | None = None,
        tie_rule: str | None = None,
        interleaving: dict[str, Any] | None = None,
        rankers_per_query: int | None = None,
        browser_clicks: dict[str, Any] | None = None,
        metrics: list[dict[str, Any]] | None = None,
        primary_metric: str | None = None,
        units: dict[str, Any] | None = None,
        segments: dict[str, Any] | None = None,
    ) -> Experiment:
        """Start a running experiment (not retried: a retry could create a second one)."""
        body = experiment_body(
            name,
            rankers,
            policy,
            attribution_window_secs,
            seed,
            tie_rule,
            interleaving,
            rankers_per_query,
            browser_clicks,
            metrics,
            primary_metric,
            units,
            segments,
        )
        return Experiment.from_json(await self._post("/v1/experiments", body, retry=False))

    async def experiment(self, experiment_id: int) -> Experiment:
        return Experiment.from_json(await self._get(f"/v1/experiments/{experiment_id}"))

    async def list_experiments(
        self, *, limit: int | None = None, after: int | None = None
    ) -> ExperimentPage:
        """One page of experiments, oldest first; pass `next_after` as `after` for the next."""
        params = {k: str(v) for k, v in (("limit", limit), ("after", after)) if v is not None}
        return ExperimentPage.from_json(await self._get("/v1/experiments", params))

    async def iter_experiments(self, *, page_size: int = 100) -> AsyncIterator[ExperimentSummary]:
        """Every experiment, oldest first, fetching pages of `page_size` as needed."""
        after: int | None = None
        while True:
            page = await self.list_experiments(limit=page_size, after=after)
            for summary in page.experiments:
                yield summary
            if page.next_after is None:
                return
            after = page.next_after

    async def set_status(self, experiment_id: int, status: str) -> Experiment:
        """`running`, `paused` or `concluded` (final)."""
        response = await self._send(
            "PATCH", f"/v1/experiments/{experiment_id}", {"status": status}, True
        )
        return Experiment.from_json(json_of(response))

    async def delete_experiment(self, experiment_id: int) -> None:
        response = await self._send("DELETE", f"/v1/experiments/{experiment_id}", None, False)
        if response.status_code >= 300:
            raise error_from_response(response)

    async def add_ranker(self, experiment_id: int, name: str) -> RankerRef:
        path = f"/v1/experiments/{experiment_id}/rankers"
        return RankerRef.from_json(await self._post(path, {"name": name}, retry=False))

    async def retire_ranker(self, experiment_id: int, name: str) -> RankerRef:
        path = f"/v1/experiments/{experiment_id}/rankers/{path_segment(name)}"
        return RankerRef.from_json(json_of(await self._send("DELETE", path, None, False)))

    async def matrix(self, experiment_id: int) -> Matrix:
        return Matrix.from_json(await self._get(f"/v1/experiments/{experiment_id}/matrix"))

    async def history(
        self,
        experiment_id: int,
        *,
        since: datetime | str | None = None,
        max_points: int | None = None,
    ) -> History:
        path = f"/v1/experiments/{experiment_id}/history"
        return History.from_json(await self._get(path, history_params(since, max_points)))

    # -- exports -------------------------------------------------------------------------

    def iter_outcomes(
        self,
        experiment_id: int,
        *,
        after: str | None = None,
        page_size: int | None = None,
        retries: int = 10,
        retry_wait: float = 1.0,
    ) -> AsyncExportRows:
        """Every recorded outcome of the experiment, oldest first in the service's apply order,
        each once, as dicts; streamed page by page (`async for`). `after` resumes after an
        earlier export's `cursor` (the iterator's attribute once it is done)."""
        path = f"/v1/experiments/{experiment_id}/outcomes"
        params = export_params(after, page_size)
        return AsyncExportRows(self._http, path, params, retries=retries, retry_wait=retry_wait)

    def iter_conversions(
        self,
        experiment_id: int,
        *,
        after: str | None = None,
        page_size: int | None = None,
        retries: int = 10,
        retry_wait: float = 1.0,
    ) -> AsyncExportRows:
        """Every recorded conversion of the experiment with its duel, as `iter_outcomes`."""
        path = f"/v1/experiments/{experiment_id}/conversions"
        params = export_params(after, page_size)
        return AsyncExportRows(self._http, path, params, retries=retries, retry_wait=retry_wait)

    async def outcomes_frame(self, experiment_id: int, *, after: str | None = None) -> Any:
        """`iter_outcomes` as a pandas DataFrame (needs pandas, which the SDK does not)."""
        return data_frame(await self.iter_outcomes(experiment_id, after=after).rows())

    async def conversions_frame(self, experiment_id: int, *, after: str | None = None) -> Any:
        """`iter_conversions` as a pandas DataFrame (needs pandas)."""
        return data_frame(await self.iter_conversions(experiment_id, after=after).rows())

    async def key_scope(self) -> str:
        """The scope of this client's API key: admin, ingest, read, or open (no keys)."""
        scope = await self._get("/v1/key")
        return str(scope["scope"])

    # -- polling -------------------------------------------------------------------------

    async def poll_experiment(
        self, experiment_id: int, etag: str | None = None
    ) -> tuple[Experiment | None, str | None]:
        """The experiment if it changed since `etag`, else None; and the etag to send next."""
        return await self._poll(f"/v1/experiments/{experiment_id}", etag, Experiment.from_json)

    async def poll_matrix(
        self, experiment_id: int, etag: str | None = None
    ) -> tuple[Matrix | None, str | None]:
        """The matrix if it changed since `etag`, else None; and the etag to send next."""
        return await self._poll(f"/v1/experiments/{experiment_id}/matrix", etag, Matrix.from_json)

    async def _poll(
        self, path: str, etag: str | None, parse: Callable[[dict[str, Any]], T]
    ) -> tuple[T | None, str | None]:
        headers = {"if-none-match": etag} if etag else None
        response = await self._send("GET", path, None, True, headers=headers)
        if response.status_code == 304:
            return None, etag
        return parse(json_of(response)), response.headers.get("etag")

    # -- plumbing ------------------------------------------------------------------------

    async def _get(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        return json_of(await self._send("GET", path, None, True, params=params))

    async def _post(self, path: str, body: Any, *, retry: bool) -> Any:
        return json_of(await self._send("POST", path, body, retry))

    async def _send(
        self,
        method: str,
        path: str,
        body: Any,
        retry: bool,
        *,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """One request, sent again after a 503, 5xx or no answer when `retry` allows."""
        attempts = 1 + (self.config.retries if retry else 0)
        for attempt in range(attempts):
            try:
                response = await self._http.request(
                    method, path, json=body, params=params, headers=headers
                )
            except httpx.HTTPError as exc:
                error = error_from_transport(exc)
                if attempt + 1 == attempts:
                    raise error from exc
            else:
                if response.status_code < 500 or attempt + 1 == attempts:
                    return response
                error = error_from_response(response)
            await asyncio.sleep(self._retry_delay(attempt, error))
        raise AssertionError("unreachable")

    def _retry_delay(self, attempt: int, error: JoustError) -> float:
        retry_after = getattr(error, "retry_after", None)
        return backoff_delay(
            attempt, self.config.retry_backoff, self.config.retry_backoff_cap, retry_after
        )

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
