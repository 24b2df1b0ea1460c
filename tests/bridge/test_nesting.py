"""`nests_deeper_than` and `counted_within` walk level by level; they must answer as the plain
definitions do."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from shellexec.bridge.nesting import Counted, counted_within, nests_deeper_than


def deepest_container(value: Any, level: int = 1) -> int:
    """The level of the deepest object or array in `value` (0 when it holds none)."""
    if isinstance(value, dict):
        children = list(value.values())
    elif isinstance(value, list | tuple):
        children = list(value)
    else:
        return 0
    return max([level, *(deepest_container(child, level + 1) for child in children)])


values = st.recursive(st.none() | st.integers() | st.text(max_size=3),
                      lambda children: st.lists(children, max_size=3)
                      | st.dictionaries(st.text(max_size=2), children, max_size=3),
                      max_leaves=30)


@given(values, st.integers(min_value=0, max_value=8))
def test_it_answers_as_the_definition(value: Any, limit: int) -> None:
    assert nests_deeper_than(value, limit) == (deepest_container(value) > limit)


def value_count(value: Any) -> int:
    """The values in `value`, itself included (an object's keys are not values)."""
    if isinstance(value, dict):
        return 1 + sum(value_count(child) for child in value.values())
    if isinstance(value, list | tuple):
        return 1 + sum(value_count(child) for child in value)
    return 1


def object_count(value: Any) -> int:
    """The objects in `value`, itself included."""
    if isinstance(value, dict):
        return 1 + sum(object_count(child) for child in value.values())
    if isinstance(value, list | tuple):
        return sum(object_count(child) for child in value)
    return 0


@given(values, st.integers(min_value=0, max_value=8))
def test_it_counts_the_values_and_objects_of_what_is_not_too_deep(value: Any,
                                                                 limit: int) -> None:
    expected = (None if deepest_container(value) > limit
                else Counted(value_count(value), object_count(value)))
    assert counted_within(value, limit) == expected


def test_a_nesting_too_deep_for_recursion_is_measured() -> None:
    value: Any = "leaf"
    for _ in range(100_000):
        value = [value]
    assert nests_deeper_than(value, 99_999)
    assert not nests_deeper_than(value, 100_000)
