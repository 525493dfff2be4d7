"""Upcasters turn an old payload of an event type into the current schema, one version at a time.

Register with `@upcaster("WorkloadSubmitted", from_version=1)`; `check_upcasters()` runs at every
process start-up and fails when a type's current SCHEMA_VERSION cannot be reached from 1 by the
registered chain. Upcasters are pure functions of the payload dict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .commands import COMMAND_TYPES
from .events import EVENT_TYPES

Payload = dict[str, Any]
_UPCASTERS: dict[tuple[str, int], Callable[[Payload], Payload]] = {}


class UpcasterError(RuntimeError):
    pass


def upcaster(type_name: str, *, from_version: int) -> Callable[[Callable[[Payload], Payload]],
                                                               Callable[[Payload], Payload]]:
    def register(fn: Callable[[Payload], Payload]) -> Callable[[Payload], Payload]:
        key = (type_name, from_version)
        if key in _UPCASTERS:
            raise UpcasterError(f"two upcasters for {type_name} v{from_version}")
        _UPCASTERS[key] = fn
        return fn

    return register


def current_version(type_name: str) -> int:
    cls = EVENT_TYPES.get(type_name) or COMMAND_TYPES.get(type_name)
    if cls is None:
        raise UpcasterError(f"unknown type {type_name!r}")
    return int(cls.SCHEMA_VERSION)


def upcast(type_name: str, version: int, payload: Payload) -> Payload:
    """Bring `payload` written at `version` up to the type's current schema version."""
    target = current_version(type_name)
    if version > target:
        raise UpcasterError(f"{type_name} v{version} is newer than this code (v{target})")
    while version < target:
        fn = _UPCASTERS.get((type_name, version))
        if fn is None:
            raise UpcasterError(f"no upcaster for {type_name} v{version} -> v{version + 1}")
        payload = fn(dict(payload))
        version += 1
    return payload


def check_upcasters() -> None:
    """Fail fast at start-up when some schema version cannot be reached from v1."""
    versions: dict[str, int] = {n: c.SCHEMA_VERSION for n, c in EVENT_TYPES.items()}
    versions.update({n: c.SCHEMA_VERSION for n, c in COMMAND_TYPES.items()})
    missing = [f"{name} v{v}->v{v + 1}" for name, current in sorted(versions.items())
               for v in range(1, current) if (name, v) not in _UPCASTERS]
    if missing:
        raise UpcasterError("missing upcasters: " + ", ".join(missing))


# --- the registered chain ----------------------------------------------------------------------


@upcaster("ProbeRequested", from_version=1)
def _probe_requested_v1(payload: Payload) -> Payload:
    """v1 → v2: probes logged before the fold counted every decision event were not counted."""
    payload["counted"] = False
    return payload


@upcaster("AssessTasks", from_version=1)
def _assess_tasks_v1(payload: Payload) -> Payload:
    """v1 → v2: v1 commands came from `TasksObserved`, which knows no attempts."""
    payload.setdefault("elapsed", [])
    payload.setdefault("attempts", [])
    return payload


@upcaster("ModelRetrained", from_version=1)
def _model_retrained_v1(payload: Payload) -> Payload:
    """v1 → v2: v1 hashed the model's raw float64 bytes (`events.LEGACY_FINGERPRINT`)."""
    payload["fingerprint"] = "f8-bytes"
    return payload


@upcaster("WorkloadClassified", from_version=1)
def _workload_classified_v1(payload: Payload) -> Payload:
    """v1 → v2: written by code whose model hashes were raw float64 bytes."""
    payload["fingerprint"] = "f8-bytes"
    return payload
