"""One registry of placement plugins (k8s `plugins/registry.go`), and profile construction.

Plugins register by class with `@register_plugin`; names are unique (a second registration of
a name raises). Plugins defined outside `sextant_core.placement` (the twin's `oracle`) register
the same way. `make_profile` resolves names to registered plugins and validates their args, so
a misspelt plugin or argument fails when the profile is built, not during a decision.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from .framework import FilterPlugin, Profile, ScorePlugin, Step

T = TypeVar("T")

_PLUGINS: dict[str, Any] = {}


def register_plugin(cls: type[T]) -> type[T]:
    """Class decorator: instantiate and register a plugin under its `NAME`."""
    name = getattr(cls, "NAME", "")
    if not name:
        raise TypeError(f"{cls.__name__} has no NAME")
    if name in _PLUGINS:
        raise ValueError(f"placement plugin {name!r} registered twice")
    inst = cls()
    if not isinstance(inst, FilterPlugin | ScorePlugin):
        raise TypeError(f"plugin {name!r} has neither filter(...) with REASONS nor score(...)")
    _PLUGINS[name] = inst
    return cls


def plugin(name: str) -> Any:
    try:
        return _PLUGINS[name]
    except KeyError:
        raise KeyError(f"unknown placement plugin {name!r}; known: {', '.join(sorted(_PLUGINS))}") from None


def plugin_names() -> list[str]:
    return sorted(_PLUGINS)


FilterSpec = str | tuple[str, Mapping[str, Any]]
ScoreSpec = str | tuple[str, float] | tuple[str, float, Mapping[str, Any]]


def filter_step(name: str, args: Mapping[str, Any] | None = None) -> Step:
    p = plugin(name)
    if not isinstance(p, FilterPlugin):
        raise TypeError(f"plugin {name!r} is not a filter")
    return Step(p, p.Args.model_validate(dict(args or {})))


def score_step(name: str, weight: float = 1.0, args: Mapping[str, Any] | None = None) -> Step:
    p = plugin(name)
    if not isinstance(p, ScorePlugin):
        raise TypeError(f"plugin {name!r} is not a scorer")
    if weight < 0:
        raise ValueError(f"scorer {name!r}: weight must be >= 0")
    return Step(p, p.Args.model_validate(dict(args or {})), float(weight))


def make_profile(name: str, *, filters: Iterable[FilterSpec] = (), scorers: Iterable[ScoreSpec] = (),
                 **options: Any) -> Profile:
    """A profile from plugin names: filters as `"fit"` or `("interference-d1", {"slack": 5})`;
    scorers as `"random"`, `("platform", 10)` or `("least-allocated", 1, {"memory_weight": 2})`.
    The `schedulable` filter is put first unless listed. `options` are `Profile` fields."""
    fsteps = [filter_step(f) if isinstance(f, str) else filter_step(f[0], f[1]) for f in filters]
    if not any(s.name == "schedulable" for s in fsteps):
        fsteps.insert(0, filter_step("schedulable"))
    ssteps = []
    for sc in scorers:
        if isinstance(sc, str):
            ssteps.append(score_step(sc))
        elif len(sc) == 2:
            ssteps.append(score_step(sc[0], sc[1]))
        else:
            ssteps.append(score_step(sc[0], sc[1], sc[2]))  # type: ignore[misc]
    return Profile(name=name, filters=tuple(fsteps), scorers=tuple(ssteps), **options)
