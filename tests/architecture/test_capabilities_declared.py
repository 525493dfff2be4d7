"""Every policy that implements an optional capability declares it (`sextant_core.policies`).

The capabilities are Protocols; `decide` asks `isinstance`. A policy that only *happens* to have
the method (not subclassing the Protocol) still works at run time, but mypy does not check its
signature, and a misspelt name would silently switch the feature off. So: in every module of the
core and the twin, a policy class (it has the decision method the capability extends — `place`,
`classify` or `review`) that defines a capability's methods must have the Protocol among its
bases, and one that declares it must define them.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest
import sextant_core
import sextant_sim
from sextant_core import policies

# capability -> the decision method of the policies it extends
CAPABILITIES: dict[type, str] = {
    policies.RetryHint: "place",
    policies.ExplainablePlanner: "place",
    policies.RetrainingClassifier: "classify",
    policies.ObservationAssessor: "review",
    policies.ProbeAssessor: "review",
    policies.TaskAssessor: "review",
}


def methods_of(proto: type) -> set[str]:
    return {n for n, v in vars(proto).items() if callable(v) and not n.startswith("_")}


def modules(pkg: ModuleType) -> list[ModuleType]:
    out = [pkg]
    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        out.append(importlib.import_module(info.name))
    return out


def policy_classes() -> list[type]:
    seen: dict[str, type] = {}
    for mod in [*modules(sextant_core), *modules(sextant_sim)]:
        for _, cls in inspect.getmembers(mod, inspect.isclass):
            if cls.__module__ == mod.__name__ and not getattr(cls, "_is_protocol", False):
                seen[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return [seen[k] for k in sorted(seen)]


def undeclared(cls: type) -> list[str]:
    """The capabilities `cls` implements by name without declaring them, and the ones it
    declares without implementing."""
    out = []
    for proto, decision in CAPABILITIES.items():
        if not hasattr(cls, decision):
            continue
        names = methods_of(proto)
        has = all(callable(getattr(cls, n, None)) and not getattr(getattr(cls, n), "__isabstractmethod__", False)
                  for n in names)
        declared = proto in cls.__mro__
        if has and not declared:
            out.append(f"{cls.__module__}.{cls.__qualname__} has {sorted(names)} but does not declare {proto.__name__}")
        if declared and not has:
            out.append(f"{cls.__module__}.{cls.__qualname__} declares {proto.__name__} without {sorted(names)}")
    return out


def test_every_policy_declares_the_capabilities_it_implements() -> None:
    classes = policy_classes()
    names = {c.__name__ for c in classes}
    assert {"ProfilePlanner", "CollaborativeClassifier", "Adaptive", "OraclePlanner", "Speculative"} <= names
    problems = [p for c in classes for p in undeclared(c)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("proto", list(CAPABILITIES), ids=lambda p: p.__name__)
def test_the_check_catches_an_undeclared_capability(proto: type) -> None:
    """A class with the decision method and the capability's methods, not declaring it, is
    reported; the same class declaring it is not."""
    body = {CAPABILITIES[proto]: lambda self: None, **{n: (lambda self: None) for n in methods_of(proto)}}
    plain = type("Plain", (), body)
    declared = type("Declared", (proto,), body)
    assert len(undeclared(plain)) == 1 and proto.__name__ in undeclared(plain)[0]
    assert undeclared(declared) == []
