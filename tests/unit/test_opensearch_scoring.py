"""The OpenSearch adapter's pure rules: turning k-NN innerproduct scores back into cosine, and tenant-safe ids."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rapport.adapters.opensearch.index import cosine_from_innerproduct_score, document_id

pytestmark = pytest.mark.unit


def plugin_score(inner_product: float) -> float:
    """The k-NN plugin's `_score` for faiss innerproduct, as its documentation states it."""
    return 1.0 + inner_product if inner_product >= 0 else 1.0 / (1.0 - inner_product)


@pytest.mark.parametrize(
    ("score", "cosine"),
    [(2.0, 1.0), (1.8, 0.8), (1.0, 0.0), (0.8, -0.25), (0.5, -1.0), (2.0000002, 1.0), (0.0, -1.0)],
)
def test_known_scores_convert_to_cosine(score: float, cosine: float) -> None:
    assert cosine_from_innerproduct_score(score) == pytest.approx(cosine, abs=1e-9)


@given(st.floats(min_value=-1.0, max_value=1.0))
def test_conversion_inverts_the_plugin_formula(cosine: float) -> None:
    assert cosine_from_innerproduct_score(plugin_score(cosine)) == pytest.approx(cosine, abs=1e-9)


@given(st.floats(min_value=-1.0, max_value=1.0), st.floats(min_value=-1.0, max_value=1.0))
def test_conversion_keeps_the_ranking(a: float, b: float) -> None:
    # Higher plugin score must stay the higher cosine, or recall would reorder what OpenSearch ranked.
    if plugin_score(a) < plugin_score(b):
        assert cosine_from_innerproduct_score(plugin_score(a)) <= cosine_from_innerproduct_score(plugin_score(b))


@given(st.floats(min_value=0.0, max_value=10.0))
def test_conversion_stays_a_cosine(score: float) -> None:
    assert -1.0 <= cosine_from_innerproduct_score(score) <= 1.0


def test_document_ids_never_collide_across_tenants_or_users() -> None:
    ids = {
        document_id("a:b", "c", "m"),
        document_id("a", "b:c", "m"),
        document_id("a", "b", "c:m"),
        document_id("tenant-b", "user-1", "m"),
        document_id("tenant-a", "user-1", "m"),
    }
    assert len(ids) == 5
    assert document_id("tenant-a", "user-1", "m") == document_id("tenant-a", "user-1", "m")
    assert len(document_id("t" * 300, "u" * 300, "m" * 300).encode()) <= 512  # OpenSearch's id limit
    # The end user's id (often an e-mail address) stays out of ids that show up in logs.
    assert "alice" not in document_id("t", "alice@example.com", "m")
