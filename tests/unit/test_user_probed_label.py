"""The kind the user probe is sure of takes a sentence's place where the rules read none or another kind, but never
as a fact, never below its bar, and never as news in shared work picked up again."""

from __future__ import annotations

import pytest

from rapport.domain.semantics.user import _PROBE_SURE, _of_themselves, _probed_label


def sure_of(kind: str, odds: float = 0.9) -> dict[str, float]:
    rest = (1.0 - odds) / 4
    return {k: odds if k == kind else rest for k in ("fact", "preference", "event", "goal", "none")}


@pytest.mark.parametrize("kind", ["preference", "event", "goal"])
@pytest.mark.parametrize("read", [None, "fact", "event", "goal", "preference"])
def test_a_taste_news_or_an_aim_it_is_sure_of_is_the_kind(kind: str, read: str | None) -> None:
    assert _probed_label(read, sure_of(kind)) == kind


@pytest.mark.parametrize("read", [None, "event"])
def test_a_fact_it_is_sure_of_leaves_the_rules_reading(read: str | None) -> None:
    assert _probed_label(read, sure_of("fact", 0.99)) == read


@pytest.mark.parametrize("read", [None, "fact"])
def test_nothing_it_is_sure_of_leaves_the_rules_reading(read: str | None) -> None:
    assert _probed_label(read, sure_of("none", 0.99)) == read


def test_below_its_bar_the_rules_reading_stands() -> None:
    assert _probed_label("fact", sure_of("preference", _PROBE_SURE - 0.01)) == "fact"
    assert _probed_label("fact", sure_of("preference", _PROBE_SURE)) == "preference"


def test_news_in_shared_work_picked_up_again_is_not_taken() -> None:
    assert _probed_label(None, sure_of("event"), news=False) is None
    assert _probed_label(None, sure_of("goal"), news=False) == "goal"


def test_a_fact_starting_from_them_is_theirs_whatever_the_probe_reads() -> None:
    assert _of_themselves("My brother is a pilot", sure_of("none", 0.99))
    assert _of_themselves("We have two cats", None)


@pytest.mark.parametrize(
    "said", ["Rent is 850 for a room in Leeds, and I send some home", "Nights are hard for me", "Biscuit is ours"]
)
def test_a_fact_holding_them_further_on_is_theirs_where_the_probe_reads_a_fact_first(said: str) -> None:
    assert _of_themselves(said, sure_of("fact", 0.4))
    assert not _of_themselves(said, sure_of("event", 0.4))
    assert not _of_themselves(said, None)


@pytest.mark.parametrize("said", ["She taught me how to cook", "Talk to me like a coworker would", "Rent is 850"])
def test_a_fact_without_them_or_with_them_only_as_its_object_is_not(said: str) -> None:
    assert not _of_themselves(said, sure_of("fact", 0.99))
