"""A parametrized page type is built once per process: pydantic caches it weakly, and rebuilding one costs ms."""

from __future__ import annotations

import gc
import weakref

from pydantic import BaseModel

from rapport.domain.models import Page


class _Row(BaseModel):
    name: str


def test_a_page_type_outlives_a_garbage_collection() -> None:
    made = weakref.ref(Page[_Row])  # nothing here refers to it once this line is done
    gc.collect()
    assert made() is not None and made() is Page[_Row]


def test_a_page_still_validates_its_items() -> None:
    page = Page[_Row].model_validate({"items": [{"name": "a"}], "next_cursor": "c"})
    assert page.items == [_Row(name="a")] and page.next_cursor == "c"
    assert Page[_Row].__name__ == "Page[_Row]"
