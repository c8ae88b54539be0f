"""Settings shared by the sync and async clients."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from typing import Any


def _package_version() -> str:
    try:
        return version("joust-client")
    except PackageNotFoundError:
        return "0"


USER_AGENT = f"joust-client-python/{_package_version()}"


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """What every request of a client shares.

    `timeout` bounds calls without a deadline of their own; `retries` is how many more times an
    idempotent call (interleave, clicks, outcomes, reads) is sent after a 503, a 5xx or no
    answer, waiting `retry_backoff` seconds doubled each time (with jitter, at most
    `retry_backoff_cap`, and never less than the service's `Retry-After` up to that cap).
    """

    base_url: str
    # Left out of repr: a config printed in a log or a traceback must not show the key.
    api_key: str | None = field(repr=False)
    timeout: float
    retries: int
    retry_backoff: float
    retry_backoff_cap: float

    def headers(self) -> dict[str, str]:
        headers = {"accept": "application/json", "user-agent": USER_AGENT}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    def http_options(self) -> dict[str, Any]:
        """Keyword arguments for httpx.Client and httpx.AsyncClient."""
        return {
            "base_url": self.base_url.rstrip("/"),
            "headers": self.headers(),
            "timeout": self.timeout,
        }


def experiment_body(
    name: str,
    rankers: list[str],
    policy: str | dict[str, Any] | None,
    attribution_window_secs: int | None,
    seed: int | None,
    tie_rule: str | None,
    interleaving: dict[str, Any] | None,
    rankers_per_query: int | None,
    browser_clicks: dict[str, Any] | None,
    metrics: list[dict[str, Any]] | None = None,
    primary_metric: str | None = None,
    units: dict[str, Any] | None = None,
    segments: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The body of `POST /v1/experiments`; a policy given by name takes its default params."""
    body: dict[str, Any] = {"name": name, "rankers": list(rankers)}
    if policy is not None:
        body["policy"] = {"name": policy} if isinstance(policy, str) else policy
    optional = {
        "attribution_window_secs": attribution_window_secs,
        "seed": seed,
        "tie_rule": tie_rule,
        "interleaving": interleaving,
        "rankers_per_query": rankers_per_query,
        "browser_clicks": browser_clicks,
        "metrics": metrics,
        "primary_metric": primary_metric,
        "units": units,
        "segments": segments,
    }
    body.update({key: value for key, value in optional.items() if value is not None})
    return body


def history_params(since: datetime | str | None, max_points: int | None) -> dict[str, str]:
    params: dict[str, str] = {}
    if since is not None:
        if isinstance(since, datetime):
            # A naive time is read as UTC: the service needs an RFC 3339 offset.
            since = since if since.tzinfo else since.replace(tzinfo=timezone.utc)
            since = since.isoformat()
        params["since"] = str(since)
    if max_points is not None:
        params["max_points"] = str(max_points)
    return params
