"""Turning the service's HTTP answers into JSON values or typed errors (sync and async alike)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from .errors import JoustError, Timeout, TransportError, error_for


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a `Retry-After` header; the service sends delta-seconds, never a date."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def error_from_response(response: httpx.Response) -> JoustError:
    """The typed error for a non-2xx answer, reading the `{"error": {...}}` body when present."""
    code = f"http_{response.status_code}"
    message = response.reason_phrase
    try:
        body = json.loads(response.content)
        error = body["error"]
        code = str(error["code"])
        message = str(error["message"])
    except (ValueError, KeyError, TypeError):
        pass
    return error_for(
        response.status_code,
        code,
        message,
        request_id=response.headers.get("x-request-id"),
        retry_after=parse_retry_after(response.headers.get("retry-after")),
    )


def json_of(response: httpx.Response) -> Any:
    """The JSON body of a 2xx answer; a typed error for anything else."""
    if response.status_code >= 300:
        raise error_from_response(response)
    # json.loads on the bytes skips httpx's charset detection: the service always sends UTF-8.
    return json.loads(response.content)


def error_from_transport(exc: httpx.HTTPError) -> JoustError:
    """The typed error for a request that got no answer."""
    if isinstance(exc, httpx.TimeoutException):
        return Timeout(str(exc) or type(exc).__name__)
    return TransportError("connection_error", str(exc) or type(exc).__name__)


def as_joust_error(exc: Exception) -> JoustError:
    """Any failure of a request as a typed error (for the hot path's fallback reasons)."""
    if isinstance(exc, JoustError):
        return exc
    if isinstance(exc, httpx.HTTPError):
        return error_from_transport(exc)
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
        return Timeout("no answer within the deadline")
    # A 200 that is not what it should be (a proxy's page, a truncated body): no usable answer.
    return JoustError(0, "invalid_response", f"{type(exc).__name__}: {exc}")
