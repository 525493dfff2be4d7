"""Detection (Quasar §4.1, Paragon §3.4): is a running workload off its classification?

- **Reactive** (`deviation`): an observation below the target (ratio < 1) or below the
  classification's estimate for the current allocation by more than a margin. Both mean a phase
  change, a mis-classification or a mis-assignment (Quasar §4.1); the second fires even while
  the target is still met, which is how a phase change shows before it hurts the target.
- **Proactive** (`in_sample`, `probe_sources`, `probe_change`): every `probe_period_s` a
  fraction of the active workloads is probed in place with two interference microbenchmarks; a
  significant change of the measured tolerated/caused scores against the recorded
  classification signals a phase change (Quasar §4.1; Paragon §3.4 pre-emptive mode).

[IMPL CHOICE] the sample is a *rotation*, not an independent draw: a workload belongs to round
k's sample when (h(workload) + k) mod ⌈1/fraction⌉ = 0, h a stable hash of its id. Every round
probes ≈ fraction of the active workloads (as the papers state) and every workload is probed
once every ⌈1/fraction⌉ rounds (50 minutes at 20 % / 10 min), which an independent draw does not
guarantee (it leaves some workloads unprobed for hours). Pure: the round number comes from the
triggering `Tick`'s time.

[IMPL CHOICE] probed sources: the workload's most sensitive source in its recorded
classification (lowest tolerated score: where a change hurts it first) plus one drawn from the
others with the decision's random stream (Paragon's "two randomly chosen microbenchmarks";
keeping one informed pick halves the chance of probing only sources the workload ignores).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sextant_contracts.events import WorkloadClassified
from sextant_contracts.model import INTERFERENCE_SOURCES

from .params import AdaptationParams

SOURCES = tuple(s.value for s in INTERFERENCE_SOURCES)


@dataclass(frozen=True, slots=True)
class Deviation:
    kind: str  # "below_target" | "below_estimate"
    observed: float  # observed ratio to target
    expected: float  # estimated ratio to target (0 when unknown)

    def describe(self) -> str:
        return f"{self.kind}: ratio {self.observed:.3f} vs estimate {self.expected:.3f}"


def deviation(observed: float, expected: float | None, p: AdaptationParams) -> Deviation | None:
    """The reactive verdict of one observation (ratios to the target)."""
    exp = 0.0 if expected is None or not math.isfinite(expected) else expected
    if observed < 1.0:
        return Deviation("below_target", observed, exp)
    if exp > 0 and observed < exp * (1.0 - p.estimate_margin):
        return Deviation("below_estimate", observed, exp)
    return None


@dataclass(frozen=True, slots=True)
class Step:
    """A step of the observed performance against the workload's measured baseline."""

    baseline_at: float  # the (first) baseline window's observation time
    baseline: float  # ratio to target of the baseline: its observation, or with a noise model the
    # length-weighted mean of its clean windows
    at: float
    observed: float  # ratio to target now

    @property
    def relative(self) -> float:
        return self.observed / self.baseline - 1.0

    def describe(self) -> str:
        return (f"step: ratio {self.observed:.3f} vs baseline {self.baseline:.3f} "
                f"(t={self.baseline_at:.0f}, {self.relative:+.1%})")


def step_change(observed: Sequence[tuple[float, float, tuple[float, ...]]], reset_at: float,
                first_window_start: float | None, threshold: float, gate: float | None = None,
                reset_pressure: tuple[float, ...] | None = None,
                noise: tuple[float, float, float] | None = None, effect_z: float | None = None,
                tolerated: tuple[tuple[float, ...], float] | None = None) -> Step | None:
    """The reactive step test: the latest observation against the workload's baseline.

    `observed`: (time, ratio to target, pressure around it) oldest first; observation i covers the
    telemetry window (observed[i-1] time, its time] — the first from `first_window_start` (None:
    unknown). `reset_at`: the latest change of the workload's own conditions (its
    (re)classification, placement, adjustment). Neighbours: with `gate` None, the caller folds
    their changes into `reset_at`; with a `gate` (points), a window is *noisy* when the pressure
    around the workload moved by more than `gate` on some source since the previous observation
    (or since `reset_pressure`, the pressure right after the reset) — a neighbour that changes
    little is not a reason to forget the baseline.

    The **baseline** is the first observation after the latest noisy window whose whole window lies
    after `reset_at`; the latest observation is tested against it: |latest / baseline − 1| >
    `threshold` is a step — the workload itself changed (a phase change, or a classification that
    never described it). None without a baseline or a later observation, or within the threshold.

    With `noise` = (sd, reference window s, z) the telemetry's noise is known to be `sd` (relative)
    for a window of the reference length and to shrink as 1/√length: the baseline is then the
    length-weighted mean of every clean window from the first one to the one before the latest
    (its noise shrinks with their total length), and the step must also exceed `z` standard
    deviations of the difference, sd · √(ref / baseline length + ref / latest length) — a short
    window (split at a neighbour's change) is not taken for a step because it is noisy.

    With `tolerated` = (the workload's tolerated scores per source, margin) (ladder 8.6) a
    pressure move makes a window noisy only on a source where the pressure, before or after,
    comes within `margin` points of what the workload tolerates: a neighbour change its
    classification says it does not feel keeps the baseline."""
    eps = 1e-9

    def start(i: int) -> float | None:
        return observed[i - 1][0] if i > 0 else first_window_start

    def noisy(i: int) -> bool:
        if gate is None:
            return False
        prev = observed[i - 1][2] if i > 0 and observed[i - 1][0] >= reset_at - eps else reset_pressure
        if prev is None:
            return True
        cur = observed[i][2]
        if tolerated is None:
            moved = max((abs(a - b) for a, b in zip(cur, prev, strict=False)), default=0.0) > gate
        else:
            tol, margin = tolerated
            moved = any(abs(a - b) > gate and max(a, b) > t - margin
                        for a, b, t in zip(cur, prev, tol, strict=False))
        if not moved:
            return False
        return not harmless(i)

    def length(i: int) -> float:  # the window's length, 0 when its start is unknown
        st = start(i)
        return observed[i][0] - st if st is not None else 0.0

    def bar(k: float, la: float, lb: float) -> float:
        # k standard deviations of the relative difference of two window means of lengths la, lb
        assert noise is not None
        sd, ref, _z = noise
        return k * sd * math.sqrt(ref / la + ref / lb)

    def harmless(i: int) -> bool:
        # the neighbours changed, but the workload's measured level did not move beyond the noise
        # between the window before the change and the one after it: keep the baseline
        if noise is None or effect_z is None or i < 1 or observed[i - 1][1] <= 0 or observed[i][1] <= 0:
            return False
        la, lb = length(i - 1), length(i)
        if la <= eps or lb <= eps:
            return False
        return abs(observed[i][1] / observed[i - 1][1] - 1.0) <= bar(effect_z, la, lb)

    n = len(observed)
    inside = [i for i in range(n) if (st := start(i)) is not None and st >= reset_at - eps]
    last_noisy = max((i for i in inside if noisy(i)), default=-1)
    base = next((i for i in inside if i > last_noisy and observed[i][1] > 0), None)
    if base is None or base == n - 1:
        return None
    if noise is None:
        step = Step(observed[base][0], observed[base][1], observed[-1][0], observed[-1][1])
        return step if abs(step.relative) > threshold else None
    clean = [i for i in range(base, n - 1) if observed[i][1] > 0 and length(i) > eps]
    total = sum(length(i) for i in clean)
    last = length(n - 1)
    if not clean or total <= eps or last <= eps:
        return None
    mean = sum(observed[i][1] * length(i) for i in clean) / total
    step = Step(observed[base][0], mean, observed[-1][0], observed[-1][1])
    return step if abs(step.relative) > max(threshold, bar(noise[2], total, last)) else None


def stable_hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def probe_round(at: float, p: AdaptationParams) -> int:
    return int(math.floor(at / p.probe_period_s + 1e-9))


def in_sample(workload_id: str, round_: int, p: AdaptationParams) -> bool:
    if p.probe_fraction <= 0:
        return False
    period = max(1, math.ceil(1.0 / p.probe_fraction - 1e-9))
    return (stable_hash(workload_id) + round_) % period == 0


def measured_scores(samples: Sequence[tuple[str, str, str, float, float | None]]) -> dict[str, tuple[float, float | None]]:
    """The interference sources measured by the workload's own profiling runs (Paragon §2.3's
    ramps): source -> (tolerated, caused), the latest measurement of each."""
    out: dict[str, tuple[float, float | None]] = {}
    for _run, cls, col, value, caused in samples:
        if cls == "interference" and col in SOURCES:
            out[col] = (float(value), None if caused is None else float(caused))
    return out


def probe_sources(c: WorkloadClassified | None, rng: np.random.Generator, k: int,
                  measured: Mapping[str, object] | None = None) -> tuple[str, ...]:
    """`k` distinct sources: those its profiling measured (in source order), then the most
    sensitive one (lowest tolerated; ties by source order), then random others."""
    k = max(1, min(k, len(SOURCES)))
    chosen = [i for i, s in enumerate(SOURCES) if measured and s in measured][:k]
    if len(chosen) < k:
        tol = [(c.tolerated.get(s, 100.0) if c is not None else 100.0, i) for i, s in enumerate(SOURCES)
               if i not in chosen]
        chosen.append(min(tol)[1])
    rest = [i for i in range(len(SOURCES)) if i not in chosen]
    picks = rng.permutation(len(rest))[: max(k - len(chosen), 0)]
    return tuple(SOURCES[i] for i in sorted([*chosen, *(rest[int(j)] for j in picks)]))


@dataclass(frozen=True, slots=True)
class ProbeChange:
    source: str
    score: str  # "tolerated" | "caused"
    recorded: float
    measured: float

    @property
    def relative(self) -> float:
        return abs(self.measured - self.recorded) / max(abs(self.recorded), 1e-9)

    def describe(self) -> str:
        return f"{self.score} {self.source} {self.recorded:.1f}->{self.measured:.1f}"


def probe_change(c: WorkloadClassified | None, tolerated: Mapping[str, float], caused: Mapping[str, float],
                 change: float, floor: float,
                 measured: Mapping[str, tuple[float, float | None]] | None = None,
                 scores: tuple[str, ...] = ("tolerated", "caused")) -> ProbeChange | None:
    """The largest significant change of a probe against the recorded classification signals, or
    None. The recorded value of a source is its own profiling measurement when there is one
    (`measured`), else the reconstructed entry of the classification.

    Significant: relative change > `change` and absolute change > `floor` points (0..100)."""
    if c is None:
        return None
    rec_t = dict(c.tolerated)
    rec_c = dict(c.caused)
    for src, (t, cz) in (measured or {}).items():
        rec_t[src] = t
        if cz is not None:
            rec_c[src] = cz
    best: ProbeChange | None = None
    for score, measured_now, recorded in (("tolerated", tolerated, rec_t), ("caused", caused, rec_c)):
        if score not in scores:
            continue
        measured_ = measured_now
        for src in SOURCES:
            if src not in measured_ or src not in recorded:
                continue
            m, r = float(measured_[src]), float(recorded[src])
            if not (math.isfinite(m) and math.isfinite(r)):
                continue
            pc = ProbeChange(src, score, r, m)
            if abs(m - r) > floor and pc.relative > change and (best is None or pc.relative > best.relative):
                best = pc
    return best


def straggler_change(tolerated: Mapping[str, float], reference: Mapping[str, float], change: float,
                     floor: float) -> ProbeChange | None:
    """Quasar §4.3's in-place check, against a control: the slow node's tolerated scores measured
    next to those of one of the job's healthy nodes in the same probe. [IMPL CHOICE] the paper
    compares with the original classification; in the twin the reconstructed rows are off by ~20
    points (sd) per source, more than the 20 % the rule looks for, so a same-time measurement of
    the same job is the comparison that isolates the node. One-sided: a node that tolerates
    *less* (by > `change` relative and > `floor` points) is degraded."""
    best: ProbeChange | None = None
    for src in SOURCES:
        if src not in tolerated or src not in reference:
            continue
        m, r = float(tolerated[src]), float(reference[src])
        pc = ProbeChange(src, "tolerated", r, m)
        if r - m > floor and pc.relative > change and (best is None or pc.relative > best.relative):
            best = pc
    return best


def straggler_contradicted(tolerated: Mapping[str, float], reference: Mapping[str, float], change: float,
                           floor: float) -> str | None:
    """[IMPL CHOICE] ladder 8.8: a node degraded in place tolerates less on every source (its
    ramps reach the QoS limit sooner), noise moves one source at a time. The first probed source
    with room to fall (its reference above `floor` points) whose score fell by less than `change` /
    2 relative — or rose — contradicts a straggler; None when none does."""
    for src in SOURCES:
        if src in tolerated and src in reference and float(reference[src]) > floor:
            r, m = float(reference[src]), float(tolerated[src])
            if r - m < change / 2 * r:
                return src
    return None


def straggler_likelihood(tolerated: Mapping[str, float], reference: Mapping[str, float], factor: float,
                         sd: float) -> float | None:
    """[IMPL CHOICE] ladder 8.12: how much more likely a straggler probe's scores are if the node
    runs `factor` × slower (as its task view measured) than if it is healthy — the log-likelihood
    ratio in nats, None without a common source. A node that runs f × slower for a reason outside
    the interference model reaches its QoS limit f × sooner on every ramp, so it tolerates about
    1/f of what its healthy peer does: measured ≈ reference / f; healthy: measured ≈ reference.
    Each score carries the operator's noise `sd` (points, Table III), so the difference has
    variance 2 sd² when healthy and sd² (1 + 1/f²) when slowed. Unlike `straggler_change`'s fixed
    floor, a fall too small in points to clear 18 still counts when it is the fall f predicts
    (a source tolerated at 13 points falling to 1 with f = 2.3)."""
    if sd <= 0 or factor <= 0:
        return None
    v0 = 2.0 * sd * sd
    v1 = sd * sd * (1.0 + 1.0 / (factor * factor))
    out: float | None = None
    for src in SOURCES:
        if src in tolerated and src in reference:
            m, r = float(tolerated[src]), float(reference[src])
            out = (out or 0.0) + (-(m - r / factor) ** 2 / (2 * v1) - 0.5 * math.log(v1)
                                  + (m - r) ** 2 / (2 * v0) + 0.5 * math.log(v0))
    return out


def headroom_sources(c: WorkloadClassified | None, k: int) -> tuple[str, ...]:
    """For a straggler check: the `k` sources the workload tolerates best (highest tolerated score;
    ties by source order). [IMPL CHOICE] a degraded node shows as a *drop* of its tolerated scores,
    which is only measurable where there is room to drop: a score near 0 cannot fall by the noise
    floor."""
    k = max(1, min(k, len(SOURCES)))
    tol = sorted(((-(c.tolerated.get(s, 100.0) if c is not None else 100.0), i) for i, s in enumerate(SOURCES)))
    return tuple(SOURCES[i] for i in sorted(i for _, i in tol[:k]))


# --- ladder 8.6: in-place baselines and a combined multi-source probe test ---------------------------


def sensitive_sources(c: WorkloadClassified | None, k: int) -> tuple[str, ...]:
    """The `k` sources the classification says the workload is most sensitive to (lowest
    tolerated; ties by source order), in source order. [IMPL CHOICE] a phase scales a latent
    demand, and the tolerance of every source loaded on it falls with it (twin v4): the sources
    where the workload is already sensitive are where its demand shows, so where a change of it
    shows first."""
    k = max(1, min(k, len(SOURCES)))
    tol = sorted(((c.tolerated.get(s, 100.0) if c is not None else 100.0), i) for i, s in enumerate(SOURCES))
    return tuple(SOURCES[i] for i in sorted(i for _, i in tol[:k]))


@dataclass(frozen=True, slots=True)
class CombinedChange:
    """The mean change of the tolerated scores over the probed sources, against the in-place
    baseline's mean (points; negative: the workload tolerates less), and its z-score."""

    sources: tuple[str, ...]
    baseline_probes: int
    shift: float
    z: float

    def describe(self) -> str:
        return (f"combined tolerated {self.shift:+.1f} points over {len(self.sources)} sources "
                f"vs {self.baseline_probes} in-place probe(s), z {self.z:+.2f}")


def combined_change(baseline: Sequence[Mapping[str, float]], latest: Mapping[str, float], sd: float,
                    z: float) -> CombinedChange | None:
    """Ladder 8.6's probe verdict. `baseline`: the tolerated scores of earlier probes of the same
    workload on the same server since its latest reset; `latest`: this probe's. Over the sources
    present in `latest` and in every baseline probe, the shift d = mean(latest) − mean(baseline)
    (per source, then averaged) has standard deviation sd · √((1 + 1/n) / k) for independent
    per-source noise `sd` (points), n baseline probes and k sources; a change is |d| > z of that.
    None without a baseline, a common source, or within the bar. A phase moves several sources
    the same way (twin v4: one latent demand), so their mean averages the noise down."""
    if not baseline or sd <= 0:
        return None
    common = tuple(s for s in SOURCES if s in latest and all(s in b for b in baseline))
    if not common:
        return None
    n = len(baseline)
    k = len(common)
    diffs = [float(latest[s]) - sum(float(b[s]) for b in baseline) / n for s in common]
    if not all(math.isfinite(d) for d in diffs):
        return None
    shift = sum(diffs) / k
    zz = shift / (sd * math.sqrt((1.0 + 1.0 / n) / k))
    return CombinedChange(common, n, shift, zz) if abs(zz) > z else None


# --- ladder 8.16: a step a co-resident's own telemetry explains --------------------------------------


def shift_across(observed: Sequence[tuple[float, float, tuple[float, ...]]], at: float,
                 since: float | None = None, first_start: float | None = None) -> float | None:
    """The relative move of a workload's telemetry across time `at`: the length-weighted mean of
    its windows that end after `at` against its latest window that ends at or before it (each
    window (previous observation's time, its time]; the oldest kept one from `first_start`, None:
    unknown, so it is only a "before" window, and not even that after a reset). Windows that start
    before `since` (the workload's own latest reset) are left out. None without a window on each
    side."""
    before: tuple[float, float] | None = None
    after_len = after_sum = 0.0
    for i, (t, ratio, _p) in enumerate(observed):
        start = observed[i - 1][0] if i > 0 else first_start
        if since is not None and (start is None or start < since - 1e-9) and t <= at + 1e-9:
            continue
        if t <= at + 1e-9:
            if ratio > 0:
                before = (t, ratio)
        elif start is not None and (since is None or start >= since - 1e-9) and ratio > 0:
            after_len += t - start
            after_sum += (t - start) * ratio
    if before is None or after_len <= 0:
        return None
    return (after_sum / after_len) / before[1] - 1.0
