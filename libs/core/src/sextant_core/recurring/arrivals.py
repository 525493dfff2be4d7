"""Arrival-slot prediction and its score (Morpheus §3.2: predictable periodic submissions).

`predict_slots` extends a periodic template's fitted line (`periodicity.Periodicity.period_s`,
`phase_s`) into a future window: slot n is `phase_s + n · period_s`. The natural period is only
a label and never used here — a daily job whose real period is 86 390 s drifts by 80 s over
eight days if predicted with 86 400 s.

`score_slots` scores one template's predicted slots against the submissions that happened:

- each slot is scored once, by the **first** submission within ±0.5 period of it (half-open
  window [slot − P/2, slot + P/2), so two adjacent slots never share a submission boundary);
- the slot is **hit** when that submission is within max(5 % of the period, 60 s) of the slot;
- a slot with no submission in its window is **empty** (it lowers the recall, not the hit rate).

Hit rate = hits / scored slots (the scored submissions are the test instances of detected
templates); recall = scored slots / predicted slots.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .periodicity import Periodicity


def predict_slots(template: Periodicity, start_s: float, end_s: float) -> np.ndarray:
    """Predicted submit times of `template` in [start_s, end_s), ascending (empty unless periodic)."""
    if not template.periodic or not template.period_s > 0 or end_s <= start_s:
        return np.empty(0)
    period, phase = template.period_s, template.phase_s
    n0 = math.ceil((start_s - phase) / period)
    n1 = math.ceil((end_s - phase) / period)
    slots = phase + period * np.arange(n0, n1, dtype=float)
    return slots[(slots >= start_s) & (slots < end_s)]


def hit_tolerance_s(period_s: float) -> float:
    """A hit is within max(5 % of the period, 60 s) of the slot."""
    return max(0.05 * period_s, 60.0)


@dataclass(frozen=True, slots=True)
class SlotScore:
    """Counts for one template (or summed over many)."""

    slots: int
    scored: int
    hits: int

    def __add__(self, other: SlotScore) -> SlotScore:
        return SlotScore(self.slots + other.slots, self.scored + other.scored, self.hits + other.hits)

    @property
    def hit_rate(self) -> float:
        return self.hits / self.scored if self.scored else float("nan")

    @property
    def recall(self) -> float:
        return self.scored / self.slots if self.slots else float("nan")


def score_slots(slots: np.ndarray, submits_s: np.ndarray, period_s: float) -> SlotScore:
    """Score predicted `slots` against actual submit times (any order) of one template."""
    slots = np.asarray(slots, dtype=float)
    if len(slots) == 0:
        return SlotScore(0, 0, 0)
    sub = np.sort(np.asarray(submits_s, dtype=float))
    if len(sub) == 0:
        return SlotScore(int(len(slots)), 0, 0)
    first = np.searchsorted(sub, slots - period_s / 2, side="left")
    nearest = sub[np.minimum(first, len(sub) - 1)]
    scored = (first < len(sub)) & (nearest < slots + period_s / 2)
    hits = scored & (np.abs(nearest - slots) <= hit_tolerance_s(period_s))
    return SlotScore(int(len(slots)), int(scored.sum()), int(hits.sum()))
