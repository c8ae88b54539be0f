"""A client's settings may be printed (a log line, a traceback, a debugger): never its key."""

from joust_client import Client
from joust_client._config import ClientConfig


def test_the_api_key_is_not_in_the_config_repr() -> None:
    config = ClientConfig("http://127.0.0.1:1", "secret-key-0123456789", 5.0, 2, 0.1, 2.0)
    shown = repr(config)
    assert "secret-key" not in shown
    assert "base_url='http://127.0.0.1:1'" in shown
    assert config.headers()["authorization"] == "Bearer secret-key-0123456789"


def test_the_api_key_is_not_in_a_client_repr() -> None:
    client = Client("http://127.0.0.1:1", api_key="secret-key-0123456789")
    try:
        assert "secret-key" not in repr(client)
        assert "secret-key" not in repr(client.config)
    finally:
        client.close()
