"""The buffer delivers every outcome exactly once across a service stop and restart."""

from __future__ import annotations

import time

from joust_client import Client

from conftest import eventually
from joust_server import JoustServer

OUTCOMES = 2_000


def test_buffer_survives_a_restart(restart_server: JoustServer) -> None:
    joust = restart_server
    client = Client(joust.url, timeout=2.0)
    experiment = client.create_experiment("restart", ["bm25", "bert", "colbert"], seed=3)
    duels = [client.duel(experiment.id) for _ in range(OUTCOMES)]
    assert all(duel.in_experiment for duel in duels)

    buffer = client.outcome_buffer(
        max_batch=250,
        flush_interval=0.02,
        retry_backoff=0.05,
        retry_backoff_cap=0.3,
        close_timeout=60,
    )
    bodies = []
    for number, duel in enumerate(duels):
        winner = "tie" if number % 5 == 0 else duel.rankers[number % 2]
        bodies.append({"duel_token": duel.token, "winner": winner})
        assert buffer.add_outcome(duel, winner=winner)
        if number == 600:
            # Part of the outcomes are being sent when the service goes away.
            joust.stop()
        if number == 1_400:
            time.sleep(0.3)  # a few failed sends while the service is down
            assert buffer.send_failures > 0
            joust.start()
    assert buffer.close() is True
    assert buffer.pending == 0 and buffer.rejected == 0 and buffer.dropped == 0
    assert buffer.recorded + buffer.duplicates == OUTCOMES

    def all_counted() -> bool:
        current = client.experiment(experiment.id)
        return current.outcomes_applied + current.ties_recorded >= OUTCOMES

    eventually(all_counted)
    counted = client.experiment(experiment.id)
    assert counted.outcomes_applied + counted.ties_recorded == OUTCOMES

    # Sending them all again is safe: each is a duplicate and nothing counts twice.
    again = client.outcome_batch(bodies[:1_000])
    again_rest = client.outcome_batch(bodies[1_000:])
    assert again.duplicates + again_rest.duplicates == OUTCOMES
    assert again.recorded + again_rest.recorded == 0
    recounted = client.experiment(experiment.id)
    assert recounted.outcomes_applied + recounted.ties_recorded == OUTCOMES
    assert recounted.ties_recorded == counted.ties_recorded
    client.close()
