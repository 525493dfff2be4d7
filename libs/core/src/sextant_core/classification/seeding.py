"""Offline seeding: exhaustively profiled workloads -> ``KnowledgeSeeded`` events.

Paragon §2.2 seeds each matrix with "a few tens" of workloads profiled on every column (20 and 30
for its 40- and 1 000-server clusters); Quasar §3.2 seeds scale-out with 20–30 workload types ×
1–100 nodes. The cluster twin (or an operator's benchmark campaign) describes each such workload
as a `SeedProfile`; `seed_events` turns them into events to append to the log (stream
``model-<classification>-<group>``), so the seeded matrices are rebuilt by replay like everything
else. `KnowledgeBase.seeded(seed_events(...))` gives the same knowledge base without a log.

Units are raw: performance in any positive unit consistent within a profile (each row's unit
becomes its bias), interference scores 0..100 with caused oriented so that higher = more pressure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from sextant_contracts.events import KnowledgeSeeded
from sextant_contracts.model import Classification, WorkloadKind

from .observations import group_of


@dataclass(frozen=True, slots=True)
class SeedProfile:
    """One exhaustively profiled workload: column id -> measurement, per classification."""

    row_id: str
    kind: WorkloadKind
    scale_up: Mapping[str, float] = field(default_factory=dict)
    scale_out: Mapping[str, float] = field(default_factory=dict)
    heterogeneity: Mapping[str, float] = field(default_factory=dict)
    tolerated: Mapping[str, float] = field(default_factory=dict)
    caused: Mapping[str, float] = field(default_factory=dict)


def seed_events(profiles: Iterable[SeedProfile], at: float = 0.0) -> tuple[KnowledgeSeeded, ...]:
    """One event per (profile, non-empty classification), in profile order then Quasar's order
    (scale-up, scale-out, heterogeneity, interference); columns sorted for a canonical payload."""
    out: list[KnowledgeSeeded] = []
    for p in profiles:
        kind = WorkloadKind(p.kind)
        empty: Mapping[str, float] = {}
        parts: tuple[tuple[Classification, Mapping[str, float], Mapping[str, float]], ...] = (
                 (Classification.SCALE_UP, p.scale_up, empty), (Classification.SCALE_OUT, p.scale_out, empty),
                 (Classification.HETEROGENEITY, p.heterogeneity, empty),
                 (Classification.INTERFERENCE, p.tolerated, p.caused))
        for cls, values, caused in parts:
            if not values and not caused:
                continue
            out.append(KnowledgeSeeded(at=at, classification=cls, group=group_of(cls, kind.value),
                                       row_id=p.row_id, values=dict(sorted(values.items())),
                                       caused=dict(sorted(caused.items()))))
    return tuple(out)
