"""Exports through the sync client, against live servers: every outcome once in pages, resumed
from the cursor, across a restart of the server mid-export, and as a DataFrame when pandas is
installed."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable

import pytest

from joust_client import Client, Experiment

from joust_server import JoustServer


def post_outcomes(client: Client, experiment: Experiment, n: int) -> set[str]:
    """Posts `n` outcomes (a tie every third); returns their duel ids."""
    ids = set()
    for number in range(n):
        duel = client.duel(experiment.id)
        winner = "tie" if number % 3 == 0 else duel.rankers[number % 2]
        result = client.outcome(duel, winner=winner)
        assert result is not None and result.status == "recorded"
        assert duel.duel_id is not None
        ids.add(duel.duel_id)
    return ids


def until(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Rows become final once every older transaction has ended: poll for them."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the deadline"
        time.sleep(0.05)


def test_every_outcome_once_in_pages_then_only_the_new_ones(client: Client) -> None:
    experiment = client.create_experiment("export-sdk", ["bm25", "bert", "colbert"], seed=5)
    posted = post_outcomes(client, experiment, 30)
    until(lambda: len(list(client.iter_outcomes(experiment.id, page_size=7))) == 30)
    rows = client.iter_outcomes(experiment.id, page_size=7)
    ids = [row["duel_id"] for row in rows]
    assert len(ids) == len(set(ids)) and set(ids) == posted
    assert rows.cursor is not None
    assert all(len(row["rankers"]) == 2 and row["metric"] == "click" for row in rows)

    later = post_outcomes(client, experiment, 2)
    until(lambda: len(list(client.iter_outcomes(experiment.id, after=rows.cursor))) == 2)
    assert {r["duel_id"] for r in client.iter_outcomes(experiment.id, after=rows.cursor)} == later


def test_an_export_resumes_across_a_restart_of_the_server(restart_server: JoustServer) -> None:
    joust = restart_server
    client = Client(joust.url, timeout=2.0)
    experiment = client.create_experiment("export-restart", ["bm25", "bert"], seed=6)
    posted = post_outcomes(client, experiment, 40)
    until(lambda: len(list(client.iter_outcomes(experiment.id))) == 40)
    ids = []
    rows = client.iter_outcomes(experiment.id, page_size=5, retry_wait=0.2)
    for row in rows:
        ids.append(row["duel_id"])
        if len(ids) == 12:
            # Mid-export, mid-page: the next reads fail until the server is back.
            joust.stop()
            joust.start()
    assert len(ids) == len(set(ids)) and set(ids) == posted


def test_a_data_frame_when_pandas_is_installed(client: Client) -> None:
    experiment = client.create_experiment("export-frame", ["bm25", "bert"], seed=7)
    post_outcomes(client, experiment, 4)
    if importlib.util.find_spec("pandas") is None:
        with pytest.raises(ImportError, match="pandas"):
            client.outcomes_frame(experiment.id)
        return
    until(lambda: len(client.outcomes_frame(experiment.id)) == 4)
    frame = client.outcomes_frame(experiment.id)
    assert {"duel_id", "rankers", "winner", "recorded_at"} <= set(frame.columns)
