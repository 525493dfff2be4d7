"""Derived identifiers. Inside the core nothing is random: an id is a hash of what caused it."""

from __future__ import annotations

import hashlib


def derive_id(*parts: object) -> str:
    """A 32-hex-digit id (UUID-sized) from the parts, stable across processes and platforms."""
    h = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8"))
    return h.hexdigest()[:32]


def seed_from(*parts: object) -> int:
    """A non-negative 63-bit seed derived from the parts (for numpy SeedSequence)."""
    h = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8"))
    return int.from_bytes(h.digest()[:8], "big") >> 1
