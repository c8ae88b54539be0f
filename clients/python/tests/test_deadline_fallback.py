"""The hot path under a stalled, unavailable or absent service: a fallback within the
deadline, never an exception."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from joust_client import AsyncClient, Client, Duel, Unavailable

from joust_server import JoustServer, free_port
from stall_proxy import StallProxy

DEADLINE = 0.05
# Scheduling noise on a busy 2-core machine; the deadline itself is what is being checked.
SLACK = 0.05


@pytest.fixture()
def proxy(server: JoustServer) -> Iterator[StallProxy]:
    address = urlsplit(server.url)
    assert address.hostname and address.port
    stall = StallProxy((address.hostname, address.port))
    yield stall
    stall.close()


@pytest.fixture()
def experiment_id(server: JoustServer) -> int:
    with Client(server.url) as client:
        return client.create_experiment("deadlines", ["bm25", "bert"]).id


def timed_duel(client: Client, experiment_id: int) -> tuple[Duel, float]:
    started = time.monotonic()
    duel = client.duel(experiment_id, deadline=DEADLINE, fallback="bm25")
    return duel, time.monotonic() - started


def test_stalled_service_gives_the_fallback_within_the_deadline(
    proxy: StallProxy, experiment_id: int
) -> None:
    with Client(proxy.url, timeout=5.0) as client:
        duel, _ = timed_duel(client, experiment_id)
        assert duel.in_experiment  # through the proxy, while it forwards
        proxy.hold()
        for _ in range(5):
            duel, elapsed = timed_duel(client, experiment_id)
            assert elapsed < DEADLINE + SLACK, elapsed
            assert not duel.in_experiment and duel.token is None
            assert duel.rankers == ["bm25", "bm25"] and duel.fallback_reason == "timeout"
        # The list shown for a fallback is made locally, with no request.
        shown = client.interleave(duel, {"bm25": ["a", "b"]})
        assert shown.ids == ["a", "b"] and not shown.in_experiment
        assert client.clicks(shown, clicked=["a"]) is None
        assert client.outcome(duel, winner="bm25") is None
        proxy.release()
        duel, _ = timed_duel(client, experiment_id)
        assert duel.in_experiment


def test_interleave_with_a_deadline_falls_back_to_the_first_rankers_list(
    proxy: StallProxy, experiment_id: int
) -> None:
    with Client(proxy.url) as client:
        duel = client.duel(experiment_id, deadline=1.0, fallback="bm25")
        assert duel.in_experiment
        proxy.hold()
        lists = {name: [f"{name}-1", f"{name}-2"] for name in duel.rankers}
        started = time.monotonic()
        shown = client.interleave(duel, lists, deadline=DEADLINE)
        assert time.monotonic() - started < DEADLINE + SLACK
        assert not shown.in_experiment and shown.fallback_reason == "timeout"
        assert shown.ids == lists[duel.rankers[0]]


def test_async_stalled_service_gives_the_fallback_within_the_deadline(
    proxy: StallProxy, experiment_id: int
) -> None:
    async def run() -> None:
        async with AsyncClient(proxy.url) as client:
            assert (await client.duel(experiment_id, deadline=1.0, fallback="bm25")).in_experiment
            proxy.hold()
            for _ in range(3):
                started = time.monotonic()
                duel = await client.duel(experiment_id, deadline=DEADLINE, fallback="bm25")
                assert time.monotonic() - started < DEADLINE + SLACK
                assert not duel.in_experiment and duel.fallback_reason == "timeout"
            proxy.release()

    asyncio.run(run())


def test_unavailable_service_gives_the_fallback_and_retries_outcomes(
    proxy: StallProxy, experiment_id: int
) -> None:
    with Client(proxy.url, retries=3, retry_backoff=0.01) as client:
        proxy.unavailable(1)
        duel = client.duel(experiment_id, deadline=1.0, fallback="bm25")
        assert not duel.in_experiment and duel.fallback_reason == "database_unavailable"
        assert isinstance(duel.error, Unavailable) and duel.error.retry_after == 0
        duel = client.duel(experiment_id, deadline=1.0, fallback="bm25")
        assert duel.in_experiment
        # Two 503s, then the outcome goes through: the retries are invisible to the caller.
        proxy.unavailable(2)
        result = client.outcome(duel, winner=duel.rankers[0])
        assert result is not None and result.status == "recorded"
    with Client(proxy.url, retries=0) as client:
        proxy.unavailable(1)
        with pytest.raises(Unavailable):
            client.outcome(duel, winner=duel.rankers[0])


def test_absent_service_gives_the_fallback_at_once() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with Client(url) as client:
        started = time.monotonic()
        duel = client.duel(1, deadline=DEADLINE, fallback=["bm25", "bert"])
        assert time.monotonic() - started < DEADLINE + SLACK
        assert duel.rankers == ["bm25", "bert"] and not duel.in_experiment
        assert duel.fallback_reason == "connection_error"

    async def run() -> Duel:
        async with AsyncClient(url) as client:
            return await client.duel(1, deadline=DEADLINE, fallback="bm25")

    assert asyncio.run(run()).fallback_reason == "connection_error"
