"""Reading an experiment's exported rows (`/outcomes`, `/conversions`) page by page.

Each page is streamed and parsed line by line, so memory stays flat however many rows there are.
The service lists only final rows, and rows that become final later sort after them, so a page
read again from the same URL starts with the same rows: a body that breaks off (a restart, a
dropped connection) is read again, skipping the rows already yielded, and no row is repeated
or skipped.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from ._responses import error_from_response, error_from_transport
from .errors import JoustError

NDJSON = "application/x-ndjson"


def next_link(header: str | None) -> str | None:
    """The URL of a `Link: <url>; rel="next"` header, if any."""
    if not header:
        return None
    for part in header.split(","):
        url, _, params = part.strip().partition(";")
        if 'rel="next"' in params and url.startswith("<") and url.endswith(">"):
            return url[1:-1]
    return None


class _Pages:
    """What both iterators keep: the next page's URL (with its query until the first page is
    read), the cursor after the last whole page, and how often a page is read again."""

    def __init__(self, path: str, params: dict[str, str], *, retries: int) -> None:
        self._url: str | None = path
        self._params: dict[str, str] | None = params
        self._retries = retries
        self.cursor: str | None = params.get("after")

    def _turn_page(self, response: httpx.Response) -> None:
        """After a whole page: its cursor, and the next page's URL (None after the last)."""
        self.cursor = response.headers.get("joust-cursor", self.cursor)
        self._url = next_link(response.headers.get("link"))
        self._params = None


def _answer_error(response: httpx.Response) -> Exception:
    """A page's error answer (read): final for a 4xx, a page to read again for a 5xx."""
    error = error_from_response(response)
    return error if response.status_code < 500 else _Broken(error)


def _failure(exc: httpx.HTTPError | _Broken) -> JoustError:
    """The error to raise once a page has failed more often than allowed."""
    return exc.error if isinstance(exc, _Broken) else error_from_transport(exc)


class ExportRows(_Pages):
    """Iterates the rows of one export, oldest first, as dicts (fields as the API names them).

    `cursor` is the position after the last whole page read: pass it as `after` to a later
    export to get only the rows recorded since. A page that breaks off is read again up to
    `retries` times (waiting `retry_wait` seconds), skipping the rows already yielded.
    """

    def __init__(
        self,
        http: httpx.Client,
        path: str,
        params: dict[str, str],
        *,
        retries: int,
        retry_wait: float,
    ) -> None:
        super().__init__(path, params, retries=retries)
        self._http = http
        self._retry_wait = retry_wait

    def __iter__(self) -> Iterator[dict[str, Any]]:
        while self._url is not None:
            yield from self._page(self._url, self._params)

    def _page(self, url: str, params: dict[str, str] | None) -> Iterator[dict[str, Any]]:
        yielded = 0
        failures = 0
        while True:
            seen = 0
            try:
                with self._http.stream(
                    "GET", url, params=params, headers={"accept": NDJSON}
                ) as response:
                    if response.status_code >= 300:
                        response.read()
                        raise _answer_error(response)
                    for line in response.iter_lines():
                        if not line:
                            continue
                        seen += 1
                        if seen > yielded:
                            yielded = seen
                            yield json.loads(line)
                    self._turn_page(response)
                    return
            except (httpx.HTTPError, _Broken) as exc:
                failures += 1
                if failures > self._retries:
                    raise _failure(exc) from exc
                time.sleep(self._retry_wait)


class AsyncExportRows(_Pages):
    """`ExportRows` for the asyncio client: iterate with `async for`. The same pages, cursor and
    re-reads of a page that breaks off (waiting with `asyncio.sleep`)."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        path: str,
        params: dict[str, str],
        *,
        retries: int,
        retry_wait: float,
    ) -> None:
        super().__init__(path, params, retries=retries)
        self._http = http
        self._retry_wait = retry_wait

    async def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        while self._url is not None:
            async for row in self._page(self._url, self._params):
                yield row

    async def _page(self, url: str, params: dict[str, str] | None) -> AsyncIterator[dict[str, Any]]:
        yielded = 0
        failures = 0
        while True:
            seen = 0
            try:
                async with self._http.stream(
                    "GET", url, params=params, headers={"accept": NDJSON}
                ) as response:
                    if response.status_code >= 300:
                        await response.aread()
                        raise _answer_error(response)
                    async for line in response.aiter_lines():
                        if not line:
                            continue
                        seen += 1
                        if seen > yielded:
                            yielded = seen
                            yield json.loads(line)
                    self._turn_page(response)
                    return
            except (httpx.HTTPError, _Broken) as exc:
                failures += 1
                if failures > self._retries:
                    raise _failure(exc) from exc
                await asyncio.sleep(self._retry_wait)

    async def rows(self) -> list[dict[str, Any]]:
        """Every row, read to the end (the cursor is then the last page's)."""
        return [row async for row in self]


class _Broken(Exception):
    """A 5xx answer to a page: read it again."""

    def __init__(self, error: JoustError) -> None:
        super().__init__(str(error))
        self.error = error


def export_params(after: str | None, page_size: int | None) -> dict[str, str]:
    params = {"format": "ndjson"}
    if after is not None:
        params["after"] = after
    if page_size is not None:
        params["limit"] = str(page_size)
    return params


def data_frame(rows: ExportRows | list[dict[str, Any]]) -> Any:
    """The rows as a pandas DataFrame; pandas is optional, so it is imported only here."""
    try:
        import pandas  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError as exc:
        raise ImportError(
            "outcomes_frame and conversions_frame need pandas: pip install pandas "
            "(or iterate iter_outcomes / iter_conversions, which need nothing more)"
        ) from exc
    return pandas.DataFrame.from_records(list(rows))
