"""Runs a real joust server for the tests: the binary named by JOUST_BIN (default: the
repository's target/release/joust), on a fresh data dir, with its embedded Postgres."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
LISTENING = re.compile(r"joust listening on (http://\S+)")
START_TIMEOUT = 60.0


def joust_binary() -> str:
    return os.environ.get("JOUST_BIN") or str(REPO / "target" / "release" / "joust")


def fresh_data_dir(name: str) -> Path:
    """A new data dir under the system temp dir, reachable by the `postgres` user that the
    embedded Postgres runs as when the tests run as root (pytest's own temp dirs are 0700)."""
    parent = Path(tempfile.mkdtemp(prefix=f"joust-pysdk-{name}-"))
    parent.chmod(0o755)
    return parent / "data"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class JoustServer:
    """One `joust serve` process; `stop` and `start` again keep its data dir (and port)."""

    def __init__(self, data_dir: Path, *, port: int = 0, api_keys: str | None = None) -> None:
        self.data_dir = data_dir
        self.port = port
        self.api_keys = api_keys
        self.url = ""
        self._process: subprocess.Popen[str] | None = None
        self._starts = 0

    def start(self) -> str:
        self._starts += 1
        command = [
            joust_binary(),
            "serve",
            "--listen",
            f"127.0.0.1:{self.port}",
            "--data-dir",
            str(self.data_dir),
        ]
        if self.api_keys:
            command += ["--api-keys", self.api_keys]
        log = open(self.data_dir.parent / f"{self.data_dir.name}-{self._starts}.log", "w")  # noqa: SIM115
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "JOUST_API_KEYS")}
        self._process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=log, text=True, env=env
        )
        self.url = self._read_url(self._process)
        return self.url

    def _read_url(self, process: subprocess.Popen[str]) -> str:
        assert process.stdout is not None
        found: list[str] = []
        started = threading.Event()

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                match = LISTENING.search(line)
                if match and not found:
                    found.append(match.group(1))
                    started.set()
            # Keep draining (above), so the server never blocks on a full pipe.
            started.set()

        threading.Thread(target=read, daemon=True).start()
        started.wait(START_TIMEOUT)
        if not found:
            process.kill()
            raise RuntimeError(f"joust did not start; see the logs in {self.data_dir.parent}")
        return found[0]

    def stop(self) -> None:
        """SIGTERM, as an orchestrator stops it, and wait for the exit."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def remove_data(self) -> None:
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)
