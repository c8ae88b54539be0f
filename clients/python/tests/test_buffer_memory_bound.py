"""The buffer's memory is bounded: when it is full, adding fails at once and is counted."""

from __future__ import annotations

import asyncio
import time

from joust_client import AsyncClient, Client, Duel

from joust_server import free_port


def fake_duel(number: int) -> Duel:
    return Duel(["a", "b"], f"token-{number}", None, 1, None, False, True)


def test_full_buffer_drops_without_blocking() -> None:
    # Nothing listens there: every send fails and the items stay pending.
    with Client(f"http://127.0.0.1:{free_port()}", timeout=0.5) as client:
        buffer = client.outcome_buffer(max_pending=5, flush_interval=0.01)
        started = time.monotonic()
        accepted = [buffer.add_outcome(fake_duel(n), winner="a") for n in range(8)]
        assert time.monotonic() - started < 0.05
        assert accepted == [True] * 5 + [False] * 3
        assert buffer.dropped == 3 and buffer.pending == 5
        time.sleep(0.1)  # a few failed sends: nothing is lost or duplicated by them
        assert buffer.pending == 5 and buffer.send_failures >= 1
        assert buffer.close(timeout=0.1) is False
        assert buffer.pending == 5
        assert buffer.add_outcome(fake_duel(9), winner="a") is False
        assert buffer.dropped == 4


def test_full_async_buffer_drops_without_blocking() -> None:
    async def run() -> None:
        async with AsyncClient(f"http://127.0.0.1:{free_port()}", timeout=0.5) as client:
            buffer = client.outcome_buffer(max_pending=3, flush_interval=0.01)
            accepted = [buffer.add_outcome(fake_duel(n), winner="a") for n in range(5)]
            assert accepted == [True, True, True, False, False]
            assert buffer.dropped == 2 and buffer.pending == 3
            assert await buffer.close(timeout=0.1) is False

    asyncio.run(run())
