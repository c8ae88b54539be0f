"""A TCP proxy in front of joust that the tests can tell to hold requests or answer 503,
to see what the client does when the service stalls or is unavailable."""

from __future__ import annotations

import contextlib
import socket
import threading

_UNAVAILABLE_BODY = (
    b'{"error": {"code": "database_unavailable", "message": "the database is down"}}'
)
UNAVAILABLE = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nretry-after: 0\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s"
    % (len(_UNAVAILABLE_BODY), _UNAVAILABLE_BODY)
)


class StallProxy:
    """Forwards 127.0.0.1:port to the upstream address, unless told otherwise.

    `hold()`: bytes from clients are kept, not forwarded, until `release()` (a server that has
    stopped answering). `unavailable(n)`: the next n requests get a 503 from the proxy itself.
    """

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self._released = threading.Event()
        self._released.set()
        self._unavailable = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def hold(self) -> None:
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    def unavailable(self, requests: int) -> None:
        with self._lock:
            self._unavailable = requests

    def close(self) -> None:
        self._closed = True
        self._released.set()
        self._listener.close()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _take_unavailable(self) -> bool:
        with self._lock:
            if self._unavailable > 0:
                self._unavailable -= 1
                return True
            return False

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.upstream)
        except OSError:
            client.close()
            return
        threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()
        self._pump(client, upstream, True)

    def _pump(self, source: socket.socket, target: socket.socket, from_client: bool) -> None:
        try:
            while data := source.recv(65536):
                if from_client:
                    self._released.wait()
                    if self._take_unavailable():
                        source.sendall(UNAVAILABLE)
                        break
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
