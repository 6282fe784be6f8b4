"""The SDK against a real `rapport serve` (hashing embedder: starts in seconds), one server per test module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import ContractRecorder, RunningServer, contract_checked, start_server

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


@pytest.fixture(autouse=True)
def http_contract(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[ContractRecorder | None]:
    """What the SDK receives from a started server is checked against its OpenAPI document, as in tests/e2e; the
    tests over a mock transport have no document to check against."""
    if "rapport_server" not in request.fixturenames:
        yield None
        return
    with contract_checked(monkeypatch) as recorder:
        yield recorder
