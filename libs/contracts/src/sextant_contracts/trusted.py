"""Trusted decoding: a stored envelope whose checksum matches is read back without validation.

**The checksum.** `checksum(type, schema_version, payload_text)` is a BLAKE2b-128 digest (hex) of
the event's type, its schema version and its payload's canonical JSON text, exactly as stored.
An event store writes it with an envelope (`stored_checksum`) only when the payload is a valid
event of its type at the type's current schema version, stored in its canonical form (the
canonical JSON of the validated event, `codec`); otherwise (a payload that is no valid event, an
old schema version, a non-canonical text) it writes none.

**Reading back** (`sextant_kit.eventstore.rows`): a checksum that matches the stored text proves
that these bytes are the ones validated when written, so the envelope is built from the typed
columns without validation (`Envelope.trusted`, equal to `Envelope(...)` of the same values). A
missing checksum (rows written before it existed, payloads that did not validate) or a
mismatching one (the row was changed after it was written) takes the validated path, exactly as
before: a mismatch is not an error by itself — the validation decides.

**The event itself** is still decoded by pydantic (`Envelope.event`, once per envelope, kept):
a decoder building the models in Python without validation (`model_construct`, or the objects'
`__dict__` set directly, recursively) was measured 1.0–2× *slower* than pydantic-core's
validation on the fixture log's events; straight-line builders generated per class were faster
in isolation (≈ 0.7 µs per event of the log's mix) but not measurably in the bulk decode, which
allocation and the collector dominate (docs/platform/replay.md, fourth and sixth rounds), so
trust buys the envelope's validation and nothing is gained by bypassing the event's.
"""

from __future__ import annotations

import hashlib
from typing import Any

from . import codec
from .events import event_class

# the hash state after the (type, schema version) prefix, per pair: a checksum copies it and hashes
# the payload only (BLAKE2b of a concatenation = its state after the first part, updated)
_PREFIXES: dict[tuple[str, int], Any] = {}
_PREFIXES_KEPT = 1024  # types × schema versions; more only from rows of unknown types


def checksum(type_name: str, schema_version: int, payload_text: str) -> str:
    """The digest written with a stored envelope whose payload validated (module doc)."""
    key = (type_name, schema_version)
    prefix = _PREFIXES.get(key)
    if prefix is None:
        prefix = hashlib.blake2b(f"{type_name}\x00{schema_version}\x00".encode(), digest_size=16)
        if len(_PREFIXES) < _PREFIXES_KEPT:
            _PREFIXES[key] = prefix
    h = prefix.copy()  # the kept state itself is never updated
    h.update(payload_text.encode("utf-8"))
    return h.hexdigest()


def stored_checksum(type_name: str, schema_version: int, payload: dict[str, Any], payload_text: str) -> str | None:
    """What a store writes with an envelope (`payload_text` = `codec.dumps(payload)`): its
    checksum when the payload is a valid event of `type_name` at the type's current schema
    version in its canonical form, None otherwise (it is read back validated)."""
    try:
        cls = event_class(type_name)
    except Exception:  # noqa: BLE001 - an unknown type is simply not trusted
        return None
    if schema_version != cls.SCHEMA_VERSION:
        return None
    try:
        event = cls.model_validate(payload)
    except ValueError:
        return None
    if codec.dumps(event) != payload_text:  # not the event's canonical form: read back validated
        return None
    return checksum(type_name, schema_version, payload_text)


def matches(stored: str | None, type_name: str, schema_version: int, payload_text: str) -> bool:
    """Whether a row's stored checksum vouches for its payload text (None never does)."""
    return stored is not None and stored == checksum(type_name, schema_version, payload_text)
