"""`copy_with(record, **changes)`: `dataclasses.replace` for the state's frozen, slotted records,
without re-running `__init__` (which costs ~30 µs per call and dominated the fold).

The records have no `__post_init__` and no validation, so copying the slots and overriding a few
is exactly equivalent; an unknown field name still raises `TypeError`.
"""

from __future__ import annotations

from dataclasses import fields
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")


@cache
def _names(cls: type) -> tuple[str, ...]:
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has __post_init__; use dataclasses.replace")
    return tuple(f.name for f in fields(cls))


def copy_with(obj: T, **changes: Any) -> T:
    cls: type = type(obj)
    names = _names(cls)
    new: T = object.__new__(cls)
    setattr_ = object.__setattr__
    for name in names:
        setattr_(new, name, changes.pop(name) if name in changes else getattr(obj, name))
    if changes:
        raise TypeError(f"{cls.__name__} has no field(s) {', '.join(sorted(changes))}")
    return new
