"""Canonical JSON: one byte sequence per value, so logs and decisions compare byte for byte.

Rules: keys sorted, no whitespace, UTF-8, floats in Python's shortest round-trip form (`repr`),
-0.0 written as 0.0, NaN and infinities refused, tuples as arrays. Pydantic models are dumped in
JSON mode first.
"""

from __future__ import annotations

import json
import math
from typing import Any

from pydantic import BaseModel


class CodecError(ValueError):
    """The value cannot be written canonically (NaN, infinity, an unsupported type)."""


def _normalise(value: Any) -> Any:
    # exact built-in types first (what JSON-mode dumps are made of); subclasses (enums, numpy
    # floats, bools) take the general path below, so the result is the same either way
    t = type(value)
    if t is str or t is int or value is None or t is bool:
        return value
    if t is float:
        if not math.isfinite(value):
            raise CodecError(f"non-finite float {value!r} cannot be encoded")
        return 0.0 if value == 0.0 else value
    if t is dict:
        return {k if type(k) is str else str(k): _normalise(v) for k, v in value.items()}
    if t is list or t is tuple:
        return [_normalise(v) for v in value]
    return _general(value)


def _general(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return _normalise(value.model_dump(mode="json"))
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CodecError(f"non-finite float {value!r} cannot be encoded")
        return 0.0 if value == 0.0 else value
    if isinstance(value, dict):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    # numpy scalars and the like expose item(); anything else is a programming error.
    item = getattr(value, "item", None)
    if callable(item):
        return _normalise(item())
    raise CodecError(f"cannot encode {type(value).__name__}")


def dumps(value: Any) -> str:
    """The canonical JSON text of a value."""
    return json.dumps(_normalise(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


def dumpb(value: Any) -> bytes:
    return dumps(value).encode("utf-8")


def loads(data: str | bytes) -> Any:
    return json.loads(data)
