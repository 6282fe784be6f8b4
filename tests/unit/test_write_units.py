"""DynamoDB's write billing rules as the write meter applies them (rapport.evaluation.write_units), by hand."""

from __future__ import annotations

from rapport.evaluation.write_units import IndexShape, index_units, item_bytes, write_units

KEYS = ("pk", "sk")
BY_DOMAIN = IndexShape("gsi1pk", "gsi1sk", ("strength",))


def item(**attributes: dict[str, object]) -> dict[str, dict[str, object]]:
    return {"pk": {"S": "p"}, "sk": {"S": "s"}, **attributes}


def test_sizes_follow_dynamodbs_rules() -> None:
    assert item_bytes({"ab": {"S": "héllo"}}) == 2 + 6  # names and UTF-8 bytes
    assert item_bytes({"n": {"N": "0.0012500"}}) == 1 + 2 + 1  # "125": two bytes of digits, one more
    assert item_bytes({"b": {"B": b"\x00" * 10}}) == 1 + 10
    assert item_bytes({"l": {"L": [{"S": "ab"}, {"BOOL": True}]}}) == 1 + 3 + (1 + 2) + (1 + 1)


def test_a_write_costs_the_larger_image_per_started_kilobyte_and_twice_in_a_transaction() -> None:
    small, large = item(v={"S": "x" * 100}), item(v={"S": "x" * 5000})
    assert write_units(None, small) == 1
    assert write_units(large, small) == write_units(small, large) == 5  # an update is billed by the whole item
    assert write_units(large, None) == 5  # a delete by what it removes
    assert write_units(None, small, transactional=True) == 2


def test_an_index_is_written_only_when_what_it_holds_changes() -> None:
    before = item(gsi1pk={"S": "a"}, gsi1sk={"S": "1"}, strength={"N": "1"}, other={"S": "x"})
    assert index_units(before, {**before, "other": {"S": "y"}}, [BY_DOMAIN], KEYS) == 0  # not projected
    assert index_units(before, {**before, "strength": {"N": "0.5"}}, [BY_DOMAIN], KEYS) == 1
    assert index_units(before, {**before, "gsi1pk": {"S": "b"}}, [BY_DOMAIN], KEYS) == 2  # moved: delete and put
    assert index_units(None, item(), [BY_DOMAIN], KEYS) == 0  # no key, no entry
