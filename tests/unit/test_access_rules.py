"""The pure rule of scopes: admin holds every scope, any other only itself; the authorizer's text round-trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport.domain.access import ApiScope, missing_scopes, parse_scopes, scopes_from_text, scopes_text
from rapport.errors import InvalidInputError

scope_sets = st.frozensets(st.sampled_from(list(ApiScope)))


@given(held=scope_sets, needed=st.lists(st.sampled_from(list(ApiScope)), max_size=3))
def test_a_key_lacks_exactly_the_needed_scopes_it_does_not_hold_unless_it_is_admin(
    held: frozenset[ApiScope], needed: list[ApiScope]
) -> None:
    missing = missing_scopes(held, needed)
    if ApiScope.ADMIN in held:
        assert missing == []
    else:
        assert missing == [scope for scope in needed if scope not in held]


@given(held=scope_sets)
def test_scopes_survive_the_authorizer_context(held: frozenset[ApiScope]) -> None:
    assert scopes_from_text(scopes_text(held)) == held


def test_no_scope_implies_another_but_admin() -> None:
    assert missing_scopes({ApiScope.MEMORIES_WRITE}, [ApiScope.MEMORIES_READ]) == [ApiScope.MEMORIES_READ]
    assert missing_scopes({ApiScope.PRIVACY_ERASE}, [ApiScope.ADMIN]) == [ApiScope.ADMIN]
    assert missing_scopes(set(), [ApiScope.MEMORIES_READ]) == [ApiScope.MEMORIES_READ]


def test_an_unknown_scope_is_refused_naming_the_known_ones_and_grants_nothing_from_a_context() -> None:
    with pytest.raises(InvalidInputError, match="memories:read, memories:write"):
        parse_scopes(["memories:read", "memories:delete"])
    assert scopes_from_text("memories:read future:scope") == {ApiScope.MEMORIES_READ}
