"""Simulated users: threads that search the backend over HTTP, as a browser would, and report
their clicks when they are done with a page."""

import http.client
import json
import random
import threading
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, urlsplit

from .click_model import CascadeClickModel, known_item_query
from .corpus import Document


class QueryCounter:
    """Queries sent so far, shared by the users; `stop` ends them all."""

    def __init__(self, limit: int):
        self.limit, self.count = limit, 0
        self.stop = threading.Event()
        self._lock = threading.Lock()

    def take(self) -> bool:
        """Claims the next query; False once the limit is reached or the run was stopped."""
        with self._lock:
            if self.stop.is_set() or self.count >= self.limit:
                return False
            self.count += 1
            return True


class SimulatedUser(threading.Thread):
    def __init__(
        self,
        backend_url: str,
        documents: Sequence[Document],
        counter: QueryCounter,
        seed: int,
        click_model: CascadeClickModel | None = None,
    ):
        super().__init__(daemon=True)
        self.documents, self.counter = documents, counter
        self.click_model = click_model or CascadeClickModel()
        self.rng = random.Random(seed)
        self.address = urlsplit(backend_url).netloc
        self.error: Exception | None = None

    def run(self) -> None:
        connection = http.client.HTTPConnection(self.address, timeout=30)
        try:
            while self.counter.take():
                wanted = self.rng.choice(self.documents)
                query = known_item_query(wanted, self.rng)
                page = self._call(connection, "GET", f"/search?q={quote(query)}")
                shown = [result["id"] for result in page["results"]]
                clicked = self.click_model.clicks(shown, wanted.id, self.rng)
                body = {"search_id": page["search_id"], "clicked": clicked}
                self._call(connection, "POST", "/feedback", body)
        except Exception as error:  # reported by the driver, which then stops the run
            self.error = error
            self.counter.stop.set()
        finally:
            connection.close()

    @staticmethod
    def _call(
        connection: http.client.HTTPConnection, method: str, path: str, body: object = None
    ) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        headers = {} if data is None else {"Content-Type": "application/json"}
        connection.request(method, path, data, headers)
        response = connection.getresponse()
        payload = response.read()
        if response.status >= 400:
            raise RuntimeError(f"{method} {path}: {response.status} {payload!r}")
        return json.loads(payload) if payload else {}
