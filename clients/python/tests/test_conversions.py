"""Metrics and conversions against a live server: a purchase on the other ranker's document
counts once for the purchase metric, and the experiment says the metrics disagree."""

from __future__ import annotations

import pytest

from joust_client import Client, Conflict, ConversionResult, Invalid, JoustError

from conftest import eventually


def test_conversions_count_once_per_event_and_metric(client: Client) -> None:
    experiment = client.create_experiment(
        "conversions",
        ["x", "y"],
        policy="uniform",
        seed=3,
        metrics=[{"name": "purchase", "credit": "first", "window_seconds": 86400}],
    )
    assert [m.name for m in experiment.metrics] == ["click", "purchase"]
    assert experiment.primary_metric == "click" and experiment.metrics_agree

    duel = client.duel(experiment.id)
    while duel.rankers[0] == duel.rankers[1]:
        duel = client.duel(experiment.id)
    shown = client.interleave(
        duel, {name: [f"{name}-{i}" for i in range(3)] for name in duel.rankers}
    )
    team = {d.ranker: d.id for d in shown.documents if d.ranker}
    first, second = duel.rankers
    clicked = client.clicks(shown, clicked=[team[first]])
    assert clicked is not None and clicked.winner == first

    result = client.conversion(shown, "purchase", team[second], "order-1", value=20.0)
    assert isinstance(result, ConversionResult) and result.status == "recorded"
    again = client.conversion(shown, "purchase", team[second], "order-1", value=20.0)
    assert again is not None and again.duplicate
    batch = client.conversion_batch(
        [
            {
                "interleaving_token": shown.token,
                "metric": "purchase",
                "document": team[second],
                "value": 20.0,
                "event_id": "order-1",
            },
            {
                "interleaving_token": shown.token,
                "metric": "refund",
                "document": team[second],
                "event_id": "order-2",
            },
        ]
    )
    assert (batch.recorded, batch.duplicates, batch.rejected) == (0, 1, 1)
    assert isinstance(batch.results[1], JoustError) and batch.results[1].code == "unknown_metric"
    with pytest.raises(Conflict):
        client.conversion(shown, "purchase", team[first], "order-1")
    with pytest.raises(Invalid) as refused:
        client.conversion(shown, "purchase", "not-shown", "order-3")
    assert refused.value.code == "conversion_not_shown"

    def disagree() -> bool:
        e = client.experiment(experiment.id)
        counts = {m.name: (m.outcomes, m.champion) for m in e.metrics}
        return counts == {"click": (1, first), "purchase": (1, second)} and not e.metrics_agree

    eventually(disagree)
