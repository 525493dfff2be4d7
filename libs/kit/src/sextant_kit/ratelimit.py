"""Per-key token buckets (per-tenant request rates, DESIGN §8).

A bucket holds at most `burst` tokens and refills at `rate_per_s`; a request takes one token or is
refused with the seconds until one is back (the `Retry-After` of a 429). The clock is injected
(`time.monotonic` by default) so tests decide time themselves. State is per process: the admission
service is one process per deployment; several replicas would each allow the full rate.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    def __init__(self, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000) -> None:
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._max_keys = max_keys

    def take(self, key: str, rate_per_s: float, burst: int) -> float:
        """Take one token from `key`'s bucket; returns 0.0 when allowed, else the seconds to wait."""
        now = self._clock()
        b = self._buckets.get(key)
        if b is None:
            if len(self._buckets) >= self._max_keys:
                self._buckets.clear()  # bounded memory; forgetting buckets only ever allows more
            b = self._buckets[key] = _Bucket(float(burst), now)
        b.tokens = min(float(burst), b.tokens + max(0.0, now - b.at) * rate_per_s)
        b.at = now
        if b.tokens >= 1.0:
            b.tokens -= 1.0
            return 0.0
        return math.inf if rate_per_s <= 0 else (1.0 - b.tokens) / rate_per_s
