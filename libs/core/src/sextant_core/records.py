"""`copy_with(record, **changes)`: `dataclasses.replace` for the state's frozen, slotted records,
without re-running `__init__` (which costs ~30 µs per call and dominated the fold).

The records have no `__post_init__` and no validation, so copying the slots and overriding a few
is exactly equivalent; an unknown field name still raises `TypeError`.

Each record class gets its own copier, generated once (`_copier`): straight-line code that reads
every slot by name and sets it through the slot's descriptor, taking a changed value where one is
given. It does what a loop over `dataclasses.fields` would, about three times faster (the fold
copies ~9 records per event: `bench/replay.py`, docs/platform/replay.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from functools import cache
from typing import Any, TypeVar

T = TypeVar("T")


@cache
def _copier(cls: type) -> Callable[[Any, dict[str, Any]], Any]:
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has __post_init__; use dataclasses.replace")
    names = tuple(f.name for f in fields(cls))
    env: dict[str, Any] = {"new_": object.__new__, "cls": cls, "names": frozenset(names),
                           **{f"set_{i}": getattr(cls, n).__set__ for i, n in enumerate(names)}}
    lines = ["def copy(obj, changes):", "    new = new_(cls)",
             "    if not changes.keys() <= names:",
             "        raise TypeError(f'{cls.__name__} has no field(s) ' + ', '.join(sorted(changes.keys() - names)))"]
    lines += [f"    set_{i}(new, changes[{n!r}] if {n!r} in changes else obj.{n})" for i, n in enumerate(names)]
    lines.append("    return new")
    exec("\n".join(lines), env)  # noqa: S102 - code built from the dataclass's own field names
    copy: Callable[[Any, dict[str, Any]], Any] = env["copy"]
    return copy


def copy_with(obj: T, **changes: Any) -> T:
    cls: type = type(obj)
    result: T = _copier(cls)(obj, changes)
    return result
