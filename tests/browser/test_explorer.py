"""The memory explorer in headless Chromium against a real local server: what a person sees matches what the API
answers, and what they click (restore, record a turn, erase) changes what the API keeps."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.wait import WebDriverWait

from tests.browser.conftest import ARTIFACTS, KEY
from tests.e2e.conftest import RunningServer

AUTH = {"Authorization": f"Bearer {KEY}"}
# The constructive filter blocks the raw observation this conversation leads to ("User was frustrated with me").
SNAPPING = [
    ("user", "Why does the deploy keep failing?"),
    ("assistant", "It could be several things. Could you share the build log?"),
    ("user", "This is useless!! You're not listening, I already told you it's the CI config"),
]
DEBUGGING = [
    ("user", "I'm getting a 500 on /users again. It's our main API at work."),
    ("assistant", "Let's add step-by-step logging around the request handlers to see where it fails."),
    ("user", "That was it, it was the auth middleware, thanks — the step-by-step logging really helped"),
]
GAUGES = ("trust", "sentiment", "grudge", "familiarity")


def _record(http: httpx.Client, user: str, turns: list[tuple[str, str]]) -> dict[str, Any]:
    messages = [{"role": role, "content": content} for role, content in turns]
    answer = http.post(f"/v1/users/{user}/interactions", headers=AUTH, json={"messages": messages})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def _wait(browser: WebDriver, condition: Callable[[WebDriver], Any], timeout: float = 10) -> Any:
    # The page re-renders a list as a whole: an element read mid-render is stale, and read again on the next poll.
    ignored = (StaleElementReferenceException, NoSuchElementException)
    return WebDriverWait(browser, timeout, poll_frequency=0.05, ignored_exceptions=ignored).until(condition)


def _one(browser: WebDriver, css: str) -> WebElement:
    return _wait(
        browser, lambda b: b.find_element(By.CSS_SELECTOR, css) if b.find_elements(By.CSS_SELECTOR, css) else None
    )


def _gauges(browser: WebDriver) -> dict[str, float]:
    return {
        g.get_attribute("data-gauge"): float(g.get_attribute("data-value"))
        for g in browser.find_elements(By.CSS_SELECTOR, "[data-gauge]")
    }  # type: ignore[misc]


def _shot(browser: WebDriver, name: str) -> None:
    browser.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def _connect(browser: WebDriver, server: RunningServer, key: str = KEY) -> None:
    browser.get(f"{server.base_url}/explorer")
    field = _one(browser, "#api-key")
    field.clear()
    field.send_keys(key)
    browser.find_element(By.CSS_SELECTOR, "#connect button[type=submit]").click()


def _error(browser: WebDriver) -> str:
    return str(
        _wait(browser, lambda b: b.find_element(By.ID, "error").is_displayed() and b.find_element(By.ID, "error").text)
    )


def test_a_person_is_searched_restored_talked_to_and_erased(browser: WebDriver, explorer_server: RunningServer) -> None:
    with httpx.Client(base_url=explorer_server.base_url, timeout=60) as http:
        # Given two end users, one of whom snapped at the assistant and then debugged with it
        _record(http, "alice", SNAPPING)
        debugged = _record(http, "alice", DEBUGGING)
        bob = http.post(
            "/v1/users/bob/memories", headers=AUTH, json={"content": "Prefers short answers", "domain": "user"}
        )
        archived = http.post(
            "/v1/users/alice/memories", headers=AUTH, json={"content": "Used to deploy on Fridays", "domain": "user"}
        )
        assert bob.status_code == archived.status_code == 201, archived.text
        patched = http.patch(
            f"/v1/users/alice/memories/{archived.json()['id']}", headers=AUTH, json={"status": "archived"}
        )
        assert patched.status_code == 200, patched.text
        listed = {u["user_id"]: u for u in http.get("/v1/users", headers=AUTH).json()["users"]}

        # When the person connects with the key, the users are listed with their counts, and searchable
        browser.get_log("browser")  # what an earlier test left
        _connect(browser, explorer_server)
        _one(browser, '[data-user="bob"]')
        alice = _one(browser, '[data-user="alice"]')
        assert f"{listed['alice']['memory_count']} memories" in alice.text
        assert f"{listed['alice']['interaction_count']} interactions" in alice.text
        browser.find_element(By.ID, "user-filter").send_keys("ali")
        _wait(browser, lambda b: not b.find_elements(By.CSS_SELECTOR, '[data-user="bob"]'))
        assert browser.execute_script("return sessionStorage.getItem('rapport.explorer.key')") == KEY
        assert KEY not in browser.current_url

        # Opening alice shows her state as the API reads it
        _one(browser, '[data-user="alice"]').click()
        _wait(browser, lambda b: len(_gauges(b)) == 4)
        state = http.get("/v1/users/alice/state", headers=AUTH).json()
        for name, value in _gauges(browser).items():
            assert value == pytest.approx(state[name], abs=1e-3), name
        relation_bias = browser.find_element(By.CSS_SELECTOR, '[data-fact="relation_bias"]')
        assert float(relation_bias.get_attribute("data-value") or "nan") == pytest.approx(
            state["relation_bias"], abs=1e-4
        )
        _shot(browser, "1-person")

        # A search shows the API's hits in its order, with their labels, scores and reasons
        browser.find_element(By.ID, "query").send_keys("deploy failing")
        browser.find_element(By.CSS_SELECTOR, "#search button[type=submit]").click()
        _one(browser, "#hits [data-memory]")
        hits = http.get(
            "/v1/users/alice/memories", headers=AUTH, params={"query": "deploy failing", "limit": 20}
        ).json()
        cards = browser.find_elements(By.CSS_SELECTOR, "#hits [data-memory]")
        assert [c.get_attribute("data-memory") for c in cards] == [h["id"] for h in hits["memories"]]
        for card, hit in zip(cards, hits["memories"], strict=True):
            assert card.find_element(By.CSS_SELECTOR, "[data-label]").text == hit["match_strength"]
            assert (
                float(card.find_element(By.CSS_SELECTOR, "[data-similarity]").get_attribute("data-similarity") or 0)
                == hit["similarity"]
            )
            assert [r.text for r in card.find_elements(By.CSS_SELECTOR, ".reasons li")] == hit["match_reasons"]
            assert f"trust: {hit['trust']}" in card.text
        assert archived.json()["id"] not in [h["id"] for h in hits["memories"]]
        _shot(browser, "2-search")

        # The archived memory shows only behind the toggle; the domain filter narrows to relational memories
        browser.find_element(By.ID, "include-archived").click()
        browser.find_element(By.CSS_SELECTOR, "#search button[type=submit]").click()
        _one(browser, f'#hits [data-memory="{archived.json()["id"]}"]')
        Select(browser.find_element(By.ID, "domain")).select_by_value("relational")
        browser.find_element(By.CSS_SELECTOR, "#search button[type=submit]").click()
        _wait(browser, lambda b: not b.find_elements(By.CSS_SELECTOR, f'#hits [data-memory="{archived.json()["id"]}"]'))
        relational = http.get(
            "/v1/users/alice/memories",
            headers=AUTH,
            params={"query": "deploy failing", "limit": 20, "domain": "relational", "include_archived": "true"},
        ).json()["memories"]
        assert [
            c.get_attribute("data-memory") for c in browser.find_elements(By.CSS_SELECTOR, "#hits [data-memory]")
        ] == [m["id"] for m in relational]

        # A memory's edges, with its neighbours one click away
        extracted = debugged["pipeline"]["stored"][0]
        edges = http.get(f"/v1/users/alice/memories/{extracted}/associations", headers=AUTH).json()["associations"]
        browser.execute_script("arguments[0].value = '';", browser.find_element(By.ID, "query"))
        Select(browser.find_element(By.ID, "domain")).select_by_value("both")
        browser.find_element(By.CSS_SELECTOR, "#search button[type=submit]").click()
        _one(browser, f'#hits [data-memory="{extracted}"] button').click()
        _wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#edges [data-edge]")) == len(edges))
        # Its history: when it was stored, and where it came from (its provenance link), oldest first
        history = [
            li.get_attribute("data-history") for li in browser.find_elements(By.CSS_SELECTOR, "#memory-history li")
        ]
        assert "stored" in history
        derived = any(e["relation"] == "DERIVED_FROM" and e["direction"] == "outgoing" for e in edges)
        assert ("derived" in history) == derived
        neighbour = next(e for e in edges if e["relation"] != "DERIVED_FROM")
        other = neighbour["target_id"] if neighbour["direction"] == "outgoing" else neighbour["source_id"]
        content = http.get(f"/v1/users/alice/memories/{other}", headers=AUTH).json()["content"]
        # each neighbour is named by its content
        link = _wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, f'#edges [data-neighbour="{other}"]'))
        _wait(browser, lambda b: link.text == content)
        link.click()
        _wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#memory-body .content").text == content)
        _shot(browser, "3-memory")

        # The blocked observation is restored with one click
        blocked = _one(browser, '#decisions [data-verdict="blocked"]')
        decision_id = blocked.get_attribute("data-decision")
        assert "defensive" in blocked.text and "User was frustrated with me" in blocked.text
        blocked.find_element(By.CSS_SELECTOR, "[data-restore]").click()
        _wait(browser, lambda b: "Restored" in b.find_element(By.CSS_SELECTOR, f'[data-decision="{decision_id}"]').text)
        restored = http.get(f"/v1/users/alice/filter-decisions/{decision_id}", headers=AUTH).json()
        assert (
            restored["restored_memory_id"]
            in browser.find_element(By.CSS_SELECTOR, f'[data-decision="{decision_id}"]').text
        )
        assert not browser.find_elements(By.CSS_SELECTOR, f'[data-restore="{decision_id}"]')
        _shot(browser, "4-restored")

        # Trying a turn shows the prompt; recording the reply moves the gauges to the API's new state
        before = _gauges(browser)
        browser.find_element(By.ID, "turn-message").send_keys("Thanks so much, you really helped me with the deploy!")
        browser.find_element(By.CSS_SELECTOR, "#turn button[type=submit]").click()
        prompt = _wait(browser, lambda b: b.find_element(By.ID, "turn-prompt").text)
        assert "How you stand with this person" in prompt
        browser.find_element(By.ID, "turn-reply").send_keys("Glad it worked, happy to help.")
        browser.find_element(By.CSS_SELECTOR, "#reply button[type=submit]").click()
        _wait(browser, lambda b: "Recorded as interaction" in b.find_element(By.ID, "turn-outcome").text, timeout=30)
        after_api = http.get("/v1/users/alice/state", headers=AUTH).json()
        after = _gauges(browser)
        assert after["familiarity"] > before["familiarity"]
        outcome = browser.find_element(By.ID, "turn-outcome").text
        assert f"familiarity {before['familiarity']:.3f} → {after['familiarity']:.3f}" in outcome
        for name in GAUGES:
            assert after[name] == pytest.approx(after_api[name], abs=1e-3), name
        history = http.get("/v1/users/alice/history", headers=AUTH, params={"limit": 1}).json()["interactions"]
        assert _one(browser, f'#history [data-interaction="{history[0]["id"]}"]')
        _shot(browser, "5-turn")

        # Erasing asks for the user id, then shows the audit event the API recorded
        confirm = browser.find_element(By.ID, "erase-confirm")
        confirm.send_keys("alicex")
        browser.find_element(By.CSS_SELECTOR, "#erase button[type=submit]").click()
        assert "type alice exactly" in _error(browser)
        assert http.get("/v1/users/alice/memories", headers=AUTH).json()["total_stored"] > 0
        confirm.clear()
        confirm.send_keys("alice")
        browser.find_element(By.CSS_SELECTOR, "#erase button[type=submit]").click()
        shown = _one(browser, "#audit-event").text
        # The trail holds every write too: the event shown is the person's one erasure
        trail = http.get("/v1/audit", headers=AUTH, params={"user_id": "alice", "limit": 100}).json()["events"]
        assert [event["id"] for event in trail if event["action"] == "erase_user"] == [shown]
        assert http.get("/v1/users/alice/memories", headers=AUTH).json()["total_stored"] == 0
        _shot(browser, "6-erased")
    # No script error, refused resource or failed request on the way
    assert [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_errors_show_the_apis_message(browser: WebDriver, explorer_server: RunningServer) -> None:
    _connect(browser, explorer_server, key="not-a-key")
    assert _error(browser) == "unknown API key"

    _connect(browser, explorer_server)
    _one(browser, "#users-note")
    field = browser.find_element(By.ID, "user-id")
    field.send_keys("no such user")
    browser.find_element(By.CSS_SELECTOR, "#open-user button[type=submit]").click()
    assert _error(browser).startswith("user_id must be 1-128 characters")
    assert not browser.find_element(By.ID, "person").is_displayed()


def test_a_link_opens_a_person_at_phone_width_and_keeps_the_key_out_of_the_address(
    browser: WebDriver, explorer_server: RunningServer
) -> None:
    with httpx.Client(base_url=explorer_server.base_url, timeout=30) as http:
        for day in range(11):
            _record(http, "carol", [("user", f"Day {day}: still in Lisbon"), ("assistant", "Noted.")])
    browser.set_window_size(390, 844)
    try:
        browser.get(f"{explorer_server.base_url}/explorer#key={KEY}&user=carol")
        _wait(browser, lambda b: b.find_element(By.ID, "person-id").text == "carol")
        _wait(browser, lambda b: len(_gauges(b)) == 4)
        assert "#" not in browser.current_url and KEY not in browser.current_url
        # Nothing is wider than the phone's screen
        assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        _shot(browser, "7-phone")
        # History comes a page at a time (ten here), the rest behind a button, newest first
        _wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#history [data-interaction]")) == 10)
        more = browser.find_element(By.ID, "history-more")
        browser.execute_script("arguments[0].scrollIntoView()", more)
        more.click()
        _wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#history [data-interaction]")) == 11)
        assert "Day 0:" in browser.find_elements(By.CSS_SELECTOR, "#history [data-interaction]")[-1].text
        assert not more.is_displayed()
    finally:
        browser.set_window_size(1280, 1000)


def test_the_page_finds_its_api_before_its_own_folder(browser: WebDriver, explorer_server: RunningServer) -> None:
    # Locally the page is at the origin's root; in AWS at the stage's, which the page's calls must keep
    browser.get(f"{explorer_server.base_url}/explorer/")
    _one(browser, "#api-key")
    bases = browser.execute_async_script(
        """const done = arguments[arguments.length - 1];
        import("./api.js").then(({ ownBase, Api }) => done({
          here: ownBase(),
          stage: ownBase("/prod/explorer/index.html"),
          folder: ownBase("/prod/explorer/"),
          mapped: ownBase("/memory/explorer/"),
          root: ownBase("/explorer/index.html"),
          typed: new Api("https://api.example/prod/", "k").base,
          empty: new Api("", "k").base,
        }));"""
    )
    assert bases == {
        "here": "",
        "stage": "/prod",
        "folder": "/prod",
        "mapped": "/memory",
        "root": "",
        "typed": "https://api.example/prod",
        "empty": "",
    }
