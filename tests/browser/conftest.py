"""Headless Chromium driving the memory explorer of a real `rapport serve`, seeded through the API.

The browser tests skip, saying why, only when Chromium or its driver is not installed (`.ci/run` installs both).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from tests.e2e.conftest import ContractRecorder, RunningServer, contract_checked, start_server

ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
KEY = "key-a"
CHROMIUM = ("chromium", "chromium-browser", "google-chrome")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser" in str(item.path):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(autouse=True)
def http_contract(monkeypatch: pytest.MonkeyPatch) -> Iterator[ContractRecorder]:
    """The seeding requests are held to the OpenAPI document like every e2e request."""
    with contract_checked(monkeypatch) as recorder:
        yield recorder


@pytest.fixture(scope="module")
def explorer_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    server = start_server(
        tmp_path_factory.mktemp("explorer") / "data",
        {"RAPPORT_EMBEDDER": "hashing", "RAPPORT_HASHING_DIMENSIONS": "1024", "RAPPORT_API_KEYS": f"{KEY}:tenant-a"},
    )
    yield server
    server.stop()


def _chromium() -> tuple[str, str]:
    browser = next((found for name in CHROMIUM if (found := shutil.which(name))), None)
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        pytest.skip("Chromium and chromedriver are not installed: apt-get install chromium chromium-driver")
    return browser, driver


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    binary, driver_path = _chromium()
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # script errors and CSP refusals, for the tests
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1000"):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(driver_path))
    driver.implicitly_wait(0)
    ARTIFACTS.mkdir(exist_ok=True)
    yield driver
    driver.quit()
