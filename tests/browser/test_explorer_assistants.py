"""The explorer's assistant selector: a person's state and relational memories as each of the tenant's assistants
sees them, in headless Chromium against a started server."""

from __future__ import annotations

import httpx
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.select import Select

from tests.browser.conftest import KEY
from tests.browser.test_explorer import _connect, _gauges, _one, _shot, _wait
from tests.e2e.conftest import RunningServer

AUTH = {"Authorization": f"Bearer {KEY}"}


def _hits(browser: WebDriver) -> set[str]:
    return {
        card.find_element(By.CSS_SELECTOR, ".content").text
        for card in browser.find_elements(By.CSS_SELECTOR, "#hits .card")
    }


def test_the_selector_shows_each_assistants_relationship(browser: WebDriver, explorer_server: RunningServer) -> None:
    with httpx.Client(base_url=explorer_server.base_url, timeout=60) as http:
        # Given: carol snapped at the support bot, and the coder keeps a note of its own
        messages = [{"role": "user", "content": "WHY IS THIS STILL BROKEN? THIS IS RIDICULOUS!!"}]
        snapped = http.post(
            "/v1/users/carol/interactions", headers=AUTH, json={"messages": messages, "agent_id": "support"}
        )
        note = {"content": "Pairs well on proxy configs", "domain": "relational", "agent_id": "coder"}
        assert snapped.status_code == http.post("/v1/users/carol/memories", headers=AUTH, json=note).status_code == 201
        support_grudge = http.get("/v1/users/carol/state", headers=AUTH, params={"agent_id": "support"}).json()[
            "grudge"
        ]
    assert support_grudge > 0

    # When: carol is opened as the default assistant sees her
    _connect(browser, explorer_server)
    _one(browser, '[data-user="carol"]').click()
    _wait(browser, lambda b: b.find_element(By.ID, "person").is_displayed())
    options = [o.get_attribute("value") for o in Select(browser.find_element(By.ID, "agent")).options]
    assert options[0] == "default" and {"coder", "support"} <= set(options)
    assert _wait(browser, lambda b: _gauges(b).get("grudge") == 0.0)

    # Then: the support bot sees its grudge, the coder its note, each alone
    Select(browser.find_element(By.ID, "agent")).select_by_value("support")
    _wait(browser, lambda b: abs(_gauges(b).get("grudge", 0.0) - support_grudge) < 1e-3)
    Select(browser.find_element(By.ID, "domain")).select_by_value("relational")
    browser.find_element(By.CSS_SELECTOR, "#search button[type=submit]").click()
    _wait(browser, lambda b: "0 newest" in b.find_element(By.ID, "search-note").text)
    Select(browser.find_element(By.ID, "agent")).select_by_value("coder")
    _wait(browser, lambda b: _gauges(b).get("grudge") == 0.0)
    browser.find_element(By.CSS_SELECTOR, "#search button[type=submit]").click()
    _wait(browser, lambda b: _hits(b) == {"Pairs well on proxy configs"})
    _shot(browser, "explorer-assistants")
