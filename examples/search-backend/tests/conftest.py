"""A live joust for the tests: $JOUST_URL if set, else $JOUST_BIN (default: the repository's
target/release/joust) started on a fresh embedded database in a temporary folder."""

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def joust_url() -> Iterator[str]:
    if os.environ.get("JOUST_URL"):
        yield os.environ["JOUST_URL"]
        return
    binary = Path(os.environ.get("JOUST_BIN", REPO / "target" / "release" / "joust"))
    if not binary.exists():
        pytest.fail(f"no joust binary at {binary}: build it (cargo build --release) or set JOUST_BIN")
    # Not pytest's tmp_path: it is private to this user (0700), and run as root, joust runs its
    # Postgres as the `postgres` user, which must reach the data directory.
    data = Path(tempfile.mkdtemp(prefix="joust-example-"))
    data.chmod(0o755)
    server = subprocess.Popen(
        [str(binary), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        first_line = server.stdout.readline()  # "joust listening on http://ADDR", once it serves
        if not first_line.startswith("joust listening on "):
            pytest.fail(f"joust did not start: {first_line!r}")
        yield first_line.split()[-1]
    finally:
        server.terminate()  # joust stops its embedded Postgres on SIGTERM
        server.wait(timeout=30)
        shutil.rmtree(data, ignore_errors=True)
