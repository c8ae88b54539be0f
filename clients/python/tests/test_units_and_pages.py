"""Units, segments and pages through the sync client, against a live server."""

from __future__ import annotations

import time

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


def test_the_experiment_reports_its_units_and_each_segment(client: Client) -> None:
    experiment = client.create_experiment(
        "segments-sdk",
        ["bm25", "bert"],
        policy="uniform",
        seed=4,
        units={"window_seconds": 600, "aggregation": "unit"},
        segments={"max_segments": 3},
    )
    assert experiment.units is not None and experiment.segments is not None
    assert experiment.units.window_seconds == 600 and experiment.units.aggregation == "unit"
    assert experiment.segments.max_segments == 3 and experiment.segments.segments == []
    duel = client.duel(experiment.id, unit="user-2", query="boots", segment="tablet")
    # The uniform policy always draws two distinct rankers, so the outcome is decisive.
    assert duel.rankers[0] != duel.rankers[1]
    assert client.outcome(duel, winner=duel.rankers[0]) is not None
    # The label is registered by the duel; its counts follow once the outcome is applied.
    deadline = time.monotonic() + 30
    while True:
        view = client.experiment(experiment.id)
        assert view.segments is not None
        seen = view.segments.segments
        if (seen and seen[0].outcomes + seen[0].ties > 0) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    [tablet] = view.segments.segments
    assert tablet.label == "tablet"
    assert (tablet.outcomes, tablet.ties) == (1, 0)
    assert view.segments.rankers == ["bm25", "bert"]
    assert tablet.wins is not None and len(tablet.wins) == 2
    assert tablet.decision["decided"] is False
    assert isinstance(tablet.decision["possible_best"], list)
    assert view.units is not None and view.units.aggregation == "unit"
