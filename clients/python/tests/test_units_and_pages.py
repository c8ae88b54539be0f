"""Units, segments and pages through the sync client, against a live server."""

from __future__ import annotations

from joust_client import Client


def results_for(ranker: str) -> list[str]:
    """A ranker's made-up result list of 25 documents, partly shared."""
    return [f"{ranker}-{i}" if i % 2 else f"shared-{i}" for i in range(25)]


def test_a_unit_and_query_keep_their_duel_and_pages_continue(client: Client) -> None:
    experiment = client.create_experiment("units-sdk", ["bm25", "bert", "colbert"], seed=3)
    first = client.duel(experiment.id, unit="user-1", query="shoes", segment="mobile")
    again = client.duel(experiment.id, unit="user-1", query="shoes", segment="mobile")
    assert first.duel_id == again.duel_id and first.rankers == again.rankers
    lists = {name: results_for(name) for name in first.rankers}
    page1 = client.interleave(first, lists)
    page2 = client.interleave(first, lists, page=2)
    assert page1.offset == 0 and page2.offset == 10
    assert page2.ids and not set(page1.ids) & set(page2.ids)
    assert client.interleave(again, lists, offset=10).ids == page2.ids
