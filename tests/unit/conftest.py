"""Unit tests run with sockets forbidden: pure logic only."""

from __future__ import annotations

import socket

import pytest


class _NoNetwork(socket.socket):
    def connect(self, *args: object, **kwargs: object) -> None:
        raise RuntimeError("unit tests may not open network connections")


@pytest.fixture(autouse=True)
def _forbid_sockets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket, "socket", _NoNetwork)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        item.add_marker(pytest.mark.unit)
