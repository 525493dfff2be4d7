"""`copy_with(record, **changes)`: `dataclasses.replace` for the state's frozen, slotted records,
without re-running `__init__` (which costs ~30 µs per call and dominated the fold).

The records have no `__post_init__` and no validation, so copying the slots and overriding a few
is exactly equivalent; an unknown field name still raises `TypeError`.

**How.** One copier per (record class, names changed, in call order), generated once (`_copier`):
straight-line code that creates an instance of a private *twin* class — the same slots, in the
same order, on the same base, but without the frozen `__setattr__` — stores every slot by plain
attribute assignment (CPython's specialised slot store, no descriptor call), then sets the new
object's `__class__` to the record class. The twin's layout is the record's, so the assignment is
a type pointer swap: the result is an ordinary instance of the record class, equal, hashed and
pickled as one (docs/platform/replay.md, "Fifth round": a 45-field `WorkloadState` copy 4.8 →
0.5 µs). A class whose layout the twin cannot reproduce (a slotted base with slots of its own,
a `__weakref__` slot) gets the previous copier: every slot set through its descriptor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

T = TypeVar("T")

_COPIERS: dict[tuple[type, tuple[str, ...]], Callable[..., Any]] = {}


def _twin(cls: type) -> type | None:
    """A mutable class whose instances can become `cls` instances by `__class__` assignment, or
    None when `cls`'s layout is not one the twin reproduces."""
    slots = cls.__dict__.get("__slots__")
    if (not isinstance(slots, tuple) or cls.__bases__ != (object,) or "__weakref__" in slots
            or "__dict__" in slots or tuple(f.name for f in fields(cls)) != slots):
        return None
    twin = type(f"_{cls.__name__}Twin", (), {"__slots__": slots})
    try:  # the swap itself: refused (TypeError) when the layouts differ
        probe: Any = object.__new__(twin)
        probe.__class__ = cls
    except TypeError:
        return None
    return twin


def _copier(cls: type, changed: tuple[str, ...]) -> Callable[..., Any]:
    """`copy(obj, *values)`: `obj` with the fields `changed` set to `values` (module doc)."""
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has __post_init__; use dataclasses.replace")
    names = tuple(f.name for f in fields(cls))
    unknown = sorted(set(changed) - set(names))
    if unknown:
        raise TypeError(f"{cls.__name__} has no field(s) " + ", ".join(unknown))
    args = [f"v_{i}" for i in range(len(changed))]
    value = {n: args[changed.index(n)] if n in changed else f"obj.{n}" for n in names}
    twin = _twin(cls)
    env: dict[str, Any] = {"new_": object.__new__, "cls": cls, "twin": twin}
    lines = [f"def copy({', '.join(['obj', *args])}):"]
    if twin is not None:
        lines.append("    new = new_(twin)")
        lines += [f"    new.{n} = {value[n]}" for n in names]
        lines.append("    new.__class__ = cls")
    else:
        env.update({f"set_{i}": getattr(cls, n).__set__ for i, n in enumerate(names)})
        lines.append("    new = new_(cls)")
        lines += [f"    set_{i}(new, {value[n]})" for i, n in enumerate(names)]
    lines.append("    return new")
    exec("\n".join(lines), env)  # noqa: S102 - code built from the dataclass's own field names
    copy: Callable[..., Any] = env["copy"]
    return copy


def copy_with(obj: T, **changes: Any) -> T:
    key = (obj.__class__, tuple(changes))
    copy = _COPIERS.get(key)
    if copy is None:
        copy = _COPIERS[key] = _copier(*key)
    result: T = copy(obj, *changes.values())
    return result
