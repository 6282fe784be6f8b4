"""The SDK against a real `rapport serve` (hashing embedder: starts in seconds), one server per test module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import RunningServer, start_server

API_KEY = "sdk-key-a"
OTHER_KEY = "sdk-key-b"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Only the tests that start a server are e2e; the retry tests run over a mock transport, no sockets.
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents and "rapport_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="module")
def rapport_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    server = start_server(
        tmp_path_factory.mktemp("sdk") / "data",
        {
            "RAPPORT_EMBEDDER": "hashing",
            "RAPPORT_HASHING_DIMENSIONS": "1024",
            "RAPPORT_API_KEYS": f"{API_KEY}:tenant-sdk,{OTHER_KEY}:tenant-other",
        },
    )
    yield server
    server.stop()
