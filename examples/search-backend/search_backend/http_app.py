"""The backend's HTTP face, on the standard library's http.server.

A framework would add a dependency and hide the request path this example exists to show; a
threading http.server is enough for one machine's simulated users, and every joust call is in
backend.py, not here.
"""

import json
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .backend import SearchBackend


class SearchServer(ThreadingHTTPServer):
    daemon_threads = True  # a hung client never keeps the process from exiting

    def __init__(self, address: tuple[str, int], backend: SearchBackend):
        super().__init__(address, SearchHandler)
        self.backend = backend

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


class SearchHandler(BaseHTTPRequestHandler):
    server: SearchServer
    protocol_version = "HTTP/1.1"  # keep-alive: a user's queries reuse one connection
    # The headers and the body leave in two writes; with Nagle's algorithm on a kept-alive
    # connection the second would wait for the client's delayed ACK, 40 ms per response.
    disable_nagle_algorithm = True

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path != "/search":
            return self._send(HTTPStatus.NOT_FOUND, {"error": "not found"})
        query = parse_qs(url.query).get("q", [""])[0]
        backend = self.server.backend
        page = backend.search(query)
        results = [{"id": doc_id, "title": backend.documents[doc_id].title} for doc_id in page.ids]
        # `experiment` is there for the example's reader; a real page would not send it.
        experiment = {"rankers": page.rankers, "in_experiment": page.in_experiment}
        self._send(HTTPStatus.OK, {"search_id": page.search_id, "results": results, "experiment": experiment})

    def do_POST(self) -> None:
        if urlsplit(self.path).path != "/feedback":
            return self._send(HTTPStatus.NOT_FOUND, {"error": "not found"})
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            search_id, clicked = str(body["search_id"]), [str(doc_id) for doc_id in body["clicked"]]
        except (ValueError, KeyError, TypeError):
            return self._send(HTTPStatus.BAD_REQUEST, {"error": "expected {search_id, clicked}"})
        if not self.server.backend.feedback(search_id, clicked):
            return self._send(HTTPStatus.NOT_FOUND, {"error": "unknown or already reported search"})
        self._send(HTTPStatus.NO_CONTENT, None)

    def _send(self, status: HTTPStatus, body: Any) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass  # thousands of simulated queries would drown the summary
