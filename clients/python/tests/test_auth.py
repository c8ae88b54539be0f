"""API keys: the client sends them as Bearer tokens; missing or weak keys are typed errors."""

from __future__ import annotations

import pytest

from joust_client import Client, Forbidden, Unauthorized

from conftest import ADMIN_KEY, INGEST_KEY, READ_KEY
from joust_server import JoustServer


def test_api_keys(keyed_server: JoustServer) -> None:
    url = keyed_server.url
    with Client(url) as anonymous:
        with pytest.raises(Unauthorized) as unauthorized:
            anonymous.list_experiments()
        assert unauthorized.value.status == 401 and unauthorized.value.code == "unauthorized"
        # The hot path still serves the fallback, with the reason.
        duel = anonymous.duel(1, deadline=1.0, fallback="bm25")
        assert not duel.in_experiment and duel.fallback_reason == "unauthorized"
    with Client(url, api_key="not-a-key") as wrong, pytest.raises(Unauthorized):
        wrong.key_scope()

    with Client(url, api_key=ADMIN_KEY) as admin:
        assert admin.key_scope() == "admin"
        experiment = admin.create_experiment("keyed", ["bm25", "bert"])
    with Client(url, api_key=READ_KEY) as reader:
        assert reader.key_scope() == "read"
        assert reader.experiment(experiment.id).name == "keyed"
        with pytest.raises(Forbidden) as forbidden:
            reader.create_experiment("not allowed", ["a", "b"])
        assert forbidden.value.status == 403 and forbidden.value.code == "forbidden"
    with Client(url, api_key=INGEST_KEY) as ingest:
        duel = ingest.duel(experiment.id, deadline=1.0, fallback="bm25")
        assert duel.in_experiment
        result = ingest.outcome(duel, winner=duel.rankers[0])
        assert result is not None and result.status == "recorded"
        with pytest.raises(Forbidden):
            ingest.set_status(experiment.id, "paused")
