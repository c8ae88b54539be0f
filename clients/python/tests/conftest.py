"""Shared fixtures: live joust servers started from the binary (see joust_server.py)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from joust_server import JoustServer, fresh_data_dir

from joust_client import Client

ADMIN_KEY = "admin-key-for-tests-0123456789"
INGEST_KEY = "ingest-key-for-tests-0123456789"
READ_KEY = "read-key-for-tests-0123456789"


@pytest.fixture(scope="session")
def server() -> Iterator[JoustServer]:
    """A server without API keys, shared by the tests that need no special server."""
    joust = JoustServer(fresh_data_dir("open"))
    joust.start()
    yield joust
    joust.stop()
    joust.remove_data()


@pytest.fixture(scope="session")
def keyed_server() -> Iterator[JoustServer]:
    keys = f"admin:{ADMIN_KEY},ingest:{INGEST_KEY},read:{READ_KEY}"
    joust = JoustServer(fresh_data_dir("keyed"), api_keys=keys)
    joust.start()
    yield joust
    joust.stop()
    joust.remove_data()


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
