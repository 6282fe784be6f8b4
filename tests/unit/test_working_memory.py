"""Working memory rules: the context stays within the token budget, folds oldest first, and counts each turn once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from rapport.domain.lifecycle.working_memory import SessionContext, add_interaction, context_tokens, estimate_tokens
from rapport.domain.models import Interaction, Message, MessageRole
from rapport.settings import GovernanceSettings

RULES = GovernanceSettings()
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def exchange(n: int, user_chars: int, reply_chars: int = 40) -> Interaction:
    return Interaction(
        id=f"i{n:05d}",
        tenant_id="t",
        user_id="u",
        session_id="s1",
        messages=[
            Message(role=MessageRole.USER, content=f"Turn {n}. " + "x" * user_chars),
            Message(role=MessageRole.ASSISTANT, content="y" * reply_chars),
        ],
        occurred_at=T0 + timedelta(minutes=n),
        created_at=T0 + timedelta(minutes=n),
    )


def replay(sizes: list[int]) -> SessionContext | None:
    context: SessionContext | None = None
    for n, size in enumerate(sizes):
        context = add_interaction(context, exchange(n, size), T0 + timedelta(minutes=n), RULES)
    return context


def test_the_budget_is_the_brief_four_to_eight_thousand_tokens() -> None:
    assert (RULES.session_min_tokens, RULES.session_max_tokens, RULES.session_ttl_minutes) == (4_000, 8_000, 30)
    assert estimate_tokens("x" * 4_000, RULES.chars_per_token) == 1_000


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 40_000), min_size=1, max_size=40))
def test_the_context_never_exceeds_the_budget_and_keeps_the_latest_turn(sizes: list[int]) -> None:
    context = replay(sizes)
    assert context is not None
    assert context_tokens(context, RULES) <= RULES.session_max_tokens
    assert estimate_tokens(context.summary, RULES.chars_per_token) <= RULES.session_summary_max_tokens
    assert context.turns[-1].interaction_id == f"i{len(sizes) - 1:05d}"
    # every turn is either still verbatim or folded into the summary
    assert context.folded_turns + len(context.turns) == 2 * len(sizes)


def test_turns_stay_verbatim_until_the_upper_bound_then_fold_to_the_lower_one() -> None:
    # 7 exchanges of ~1,010 tokens each: 7,070 tokens fit under 8,000; the eighth passes it
    context = replay([4_000] * 7)
    assert context is not None and context.folded_turns == 0 and context.summary == ""
    context = add_interaction(context, exchange(7, 4_000), T0 + timedelta(hours=1), RULES)
    assert context.folded_turns > 0
    assert context_tokens(context, RULES) <= RULES.session_min_tokens
    assert context.summary.startswith("user: Turn 0.")  # the oldest turn went first, as its first sentence


def test_the_same_interaction_delivered_twice_is_added_once() -> None:
    once = add_interaction(None, exchange(1, 10), T0, RULES)
    twice = add_interaction(once, exchange(1, 10), T0 + timedelta(minutes=1), RULES)
    assert twice == once
