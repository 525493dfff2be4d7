"""`singledispatch` with a plain-dict dispatch table, for the folds' per-event dispatch.

`functools.singledispatch`'s wrapper finds the implementation in a `WeakKeyDictionary`, in Python,
on every call (≈ 7 % of the cluster fold's time on the replay bench's log). `Dispatch` answers from
a plain dict keyed by the argument's exact class, filled with singledispatch's own choice
(`dispatch(cls)`) on a class's first call and emptied by every registration, so it calls exactly
the function singledispatch would.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from functools import singledispatch
from typing import Any, Generic, TypeVar

R = TypeVar("R")


class Dispatch(Generic[R]):
    """`singledispatch(default)` on the first argument; the same `register`, `dispatch`, `registry`."""

    def __init__(self, default: Callable[..., R]) -> None:
        self._sd = singledispatch(default)
        self._table: dict[type, Callable[..., R]] = {}
        self.__doc__ = default.__doc__
        self.__name__ = getattr(default, "__name__", "dispatch")

    def __call__(self, first: Any, *args: Any) -> R:
        cls = first.__class__
        impl = self._table.get(cls)
        if impl is None:
            impl = self._table[cls] = self._sd.dispatch(cls)
        return impl(first, *args)

    def register(self, cls: Any, func: Callable[..., Any] | None = None) -> Any:
        """As `singledispatch`'s: `@register` (annotation), `@register(Cls)`, `register(Cls, f)`."""
        self._table.clear()
        if func is None and isinstance(cls, type | types.UnionType):  # registers when applied
            def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
                self._table.clear()
                return self._sd.register(cls, f)  # type: ignore[no-any-return]
            return decorate
        return self._sd.register(cls, func)

    def dispatch(self, cls: type) -> Callable[..., R]:
        return self._sd.dispatch(cls)  # type: ignore[no-any-return]

    @property
    def registry(self) -> Any:
        return self._sd.registry
