"""Shared fixtures: live joust servers started from the binary (see joust_server.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from joust_client import Client

from joust_server import JoustServer, free_port, fresh_data_dir

ADMIN_KEY = "admin-key-for-tests-0123456789"
INGEST_KEY = "ingest-key-for-tests-0123456789"
READ_KEY = "read-key-for-tests-0123456789"


@pytest.fixture(scope="session")
def servers() -> Iterator[dict[str, JoustServer]]:
    """Every server the suite uses, started (and stopped) side by side: each one's start
    (initdb of its embedded Postgres) and stop take seconds, mostly spent waiting."""
    keys = f"admin:{ADMIN_KEY},ingest:{INGEST_KEY},read:{READ_KEY}"
    started = {
        "open": JoustServer(fresh_data_dir("open")),
        "keyed": JoustServer(fresh_data_dir("keyed"), api_keys=keys),
        # A fixed port, so that a restart listens where the clients already point.
        "restart": JoustServer(fresh_data_dir("restart"), port=free_port()),
    }
    with ThreadPoolExecutor(len(started)) as pool:
        list(pool.map(JoustServer.start, started.values()))
    yield started
    with ThreadPoolExecutor(len(started)) as pool:
        list(pool.map(JoustServer.stop, started.values()))
    for joust in started.values():
        joust.remove_data()


@pytest.fixture(scope="session")
def server(servers: dict[str, JoustServer]) -> JoustServer:
    """A server without API keys, shared by the tests that need no special server."""
    return servers["open"]


@pytest.fixture(scope="session")
def keyed_server(servers: dict[str, JoustServer]) -> JoustServer:
    return servers["keyed"]


@pytest.fixture(scope="session")
def restart_server(servers: dict[str, JoustServer]) -> JoustServer:
    """A server the test may stop and start again on the same data dir and port."""
    return servers["restart"]


@pytest.fixture()
def client(server: JoustServer) -> Iterator[Client]:
    with Client(server.url) as joust:
        yield joust


def eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait until `check()` holds: the experiment's counters follow durable writes shortly."""
    due = time.monotonic() + timeout
    while not check():
        if time.monotonic() > due:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)
