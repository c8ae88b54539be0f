"""Request bodies shared by the sync and async clients and buffers, and the local stand-ins
(fallback duels, locally made lists) that need no request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote

from .errors import JoustError
from .models import Duel, Interleaving

Ordering = Sequence[str | Sequence[str]]


def fallback_rankers(fallback: str | Sequence[str]) -> list[str]:
    """The rankers a fallback duel names.

    One name stands on both sides, as a concluded or self-duel does, so code that reads a
    two-ranker duel's `rankers[0]` and `rankers[1]` serves the fallback with no special case.
    """
    if isinstance(fallback, str):
        return [fallback, fallback]
    return list(fallback)


def outcome_body(
    duel: Duel | str,
    winner: str | None,
    credits: Mapping[str, float] | None,
    ordering: Ordering | None,
) -> dict[str, Any] | None:
    """The body of `POST /v1/outcomes`, or None when the duel has no token (nothing to record)."""
    token = duel if isinstance(duel, str) else duel.token
    given = (winner is not None) + (credits is not None) + (ordering is not None)
    if given != 1:
        raise ValueError("give exactly one of winner, credits and ordering")
    if token is None:
        return None
    if winner is not None:
        return {"duel_token": token, "winner": winner}
    if credits is not None:
        return {"duel_token": token, "credits": dict(credits)}
    assert ordering is not None
    # The service refuses a whole batch over one empty tied group: refuse it here, at the call.
    if any(not isinstance(place, str) and len(place) == 0 for place in ordering):
        raise ValueError("an ordering's tied group names one or more rankers")
    return {
        "duel_token": token,
        "ordering": [name if isinstance(name, str) else list(name) for name in ordering],
    }


def clicks_body(
    shown: Interleaving | str,
    clicked: Sequence[str] | None,
    click_positions: Sequence[int] | None,
) -> dict[str, Any] | None:
    """The body of `POST /v1/clicks`, or None when the list was made locally (no token)."""
    token = shown if isinstance(shown, str) else shown.token
    if (clicked is None) == (click_positions is None):
        raise ValueError("give exactly one of clicked and click_positions")
    if token is None:
        return None
    if clicked is not None:
        return {"interleaving_token": token, "clicks": list(clicked)}
    assert click_positions is not None
    return {"interleaving_token": token, "click_positions": list(click_positions)}


def conversion_body(
    shown: Interleaving | str,
    metric: str,
    document: str,
    event_id: str,
    value: float | None,
) -> dict[str, Any] | None:
    """The body of `POST /v1/conversions`, or None when the list was made locally (no token)."""
    token = shown if isinstance(shown, str) else shown.token
    if token is None:
        return None
    body: dict[str, Any] = {
        "interleaving_token": token,
        "metric": metric,
        "document": document,
        "event_id": event_id,
    }
    if value is not None:
        body["value"] = value
    return body


def interleave_body(
    duel: Duel,
    lists: Mapping[str, Sequence[str]],
    page: int | None = None,
    offset: int | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "duel_token": duel.token,
        "lists": {name: list(ids) for name, ids in lists.items()},
    }
    if page is not None:
        body["page"] = page
    if offset is not None:
        body["offset"] = offset
    return body


def duel_body(unit: str | None, query: str | None, segment: str | None) -> dict[str, Any] | None:
    """The duel request's optional body: who asks, for what query, in which segment."""
    body = {
        key: value
        for key, value in (("unit", unit), ("query", query), ("segment", segment))
        if value is not None
    }
    return body or None


def local_interleaving(
    duel: Duel,
    lists: Mapping[str, Sequence[str]],
    reason: str | None,
    error: JoustError | None,
    max_length: int = 10,
) -> Interleaving:
    """The list to show without the service: the duel's first ranker's own results.

    That is what the service itself shows for a concluded or self-duel, and for a fallback duel
    it is the fallback ranker's list.
    """
    first = duel.rankers[0] if duel.rankers else next(iter(lists), "")
    ids = list(dict.fromkeys(lists.get(first, ())))[:max_length]
    return Interleaving.local(duel, ids, reason, error)


def path_segment(name: str) -> str:
    """A ranker name as one URL path segment (names may hold `/`, spaces, anything printable)."""
    return quote(name, safe="")
