"""A month of recurring batch jobs for the Morpheus twin (spec/morpheus.md §7), seeded and vectorised.

`generate(seed, params)` draws `params.templates` periodic job templates and every instance of
them over `params.days` days; all times are seconds from the record's start (period starts are
wall-clock aligned: `floor(t / P) · P`, as `sextant_core.recurring.slo` assumes).

Templates:

- **period**: a mix of natural periods (mostly hourly and daily), a tail of off-kilter periods
  (58 min, 100 min) and weekly ones (four runs a month: too few for SLO inference, spec §7);
- **submit offset** within the period clustered at the start of the hour (`hour_start_share` at
  minute 0, a fifth of the rest at :15 / :30 / :45, the rest uniform), plus 0–30 s of jitter;
- **stages** (1–4, map/reduce-like): a wide first stage, narrower later ones; per stage a nominal
  max parallelism (containers) and duration (minutes); a run lasts 3–25 % of its period (at most 6 h);
- **provenance**: input available a few minutes before the submission, late by a lognormal delay
  with a per-template probability (`late_input_max`); the first read of the output at a fixed
  time of the period (slack/duration lognormal, median `slack_median`) with small noise, by a
  consumer template (same or longer period) or by egress; `irregular_read_share` of templates
  are read at random times and `unread_share` never.

Instances (run-to-run variance, spec §2.2/§7): a lognormal input-size factor (σ per template,
`input_sigma`) scales work, and its square root the parallelism; a large code delta (work ×
0.6–1.8 from a random day) for `large_delta_share` of templates and a small one (× 0.9–1.1) for
half; the hardware mix (`sku2_share` of runs on hardware `sku2_slowdown` slower: 40 %, Fig. 2c);
stragglers (a stage followed by a one-container tail of 30–150 % of its duration); failures that
retry (the run fails part-way and starts again: the long tail) and terminal failures (the run
stops part-way; `succeeded` False).

An instance is a sequence of phases: `work[i, p]` container-minutes at up to `par[i, p]`
containers (the execution model, `execution.py`). The user's static provisioning is
`provisioning.py`; the ad-hoc load `adhoc_load`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..arrivals import rng_for

HOUR_S = 3600.0
DAY_S = 86400.0
MAX_STAGES = 4
MAX_PHASES = 4 * MAX_STAGES  # stages, their straggler tails, and a retried copy of both
RECURRING_VERSION = "recurring-1"  # bump with any change to what `generate` draws

# (period in seconds, share of templates)
PERIOD_MIX: tuple[tuple[float, float], ...] = (
    (1800.0, 0.05), (3600.0, 0.33), (7200.0, 0.05), (14400.0, 0.05), (21600.0, 0.04), (43200.0, 0.04),
    (86400.0, 0.36), (3480.0, 0.02), (6000.0, 0.02), (7 * 86400.0, 0.04))


@dataclass(frozen=True)
class WorkloadParams:
    """Generator parameters (module doc); the defaults are the twin's calibration."""

    templates: int = 200
    days: float = 30.0
    hour_start_share: float = 0.6
    input_sigma: tuple[float, float] = (0.05, 0.3)
    large_delta_share: float = 0.18
    small_delta_share: float = 0.5
    sku2_share: float = 0.3
    sku2_slowdown: float = 1.4
    straggler_prob: float = 0.05
    retry_prob: float = 0.02
    fail_prob: float = 0.01
    late_input_max: float = 0.1
    slack_median: float = 1.6
    slack_sigma: float = 0.9
    irregular_read_share: float = 0.08
    unread_share: float = 0.04
    egress_share: float = 0.2
    read_noise: float = 0.01  # of the read offset, standard deviation


@dataclass(frozen=True)
class Templates:
    """Per-template truths (index = template key)."""

    period_s: np.ndarray
    offset_s: np.ndarray  # submit offset within the period
    stage_par: np.ndarray  # (T, MAX_STAGES) nominal max parallelism, 0 = no stage
    stage_min: np.ndarray  # (T, MAX_STAGES) nominal minutes
    input_sigma: np.ndarray
    late_prob: np.ndarray
    read_offset_s: np.ndarray  # nominal first read, relative to the period start (nan: never read)
    read_irregular: np.ndarray  # bool
    reader: np.ndarray  # consumer template key, -1 = egress
    delta_day: np.ndarray  # day of the large code delta, nan = none
    delta_factor: np.ndarray

    @property
    def count(self) -> int:
        return int(self.period_s.size)

    @property
    def peak(self) -> np.ndarray:
        """Nominal peak parallelism (containers)."""
        return np.asarray(self.stage_par.max(axis=1))

    @property
    def duration_min(self) -> np.ndarray:
        return np.asarray(self.stage_min.sum(axis=1))


@dataclass(frozen=True)
class Instances:
    """Per-instance truths, sorted by submit time (ties by template)."""

    template: np.ndarray
    submit_s: np.ndarray
    input_s: np.ndarray  # last write to any input
    read_s: np.ndarray  # first read of the output (nan: never)
    work: np.ndarray  # (I, MAX_PHASES) container-minutes
    par: np.ndarray  # (I, MAX_PHASES) max parallelism
    phases: np.ndarray  # phases used
    succeeded: np.ndarray  # bool: False = a terminal failure part-way
    sku2: np.ndarray  # bool

    @property
    def count(self) -> int:
        return int(self.template.size)

    @property
    def start_s(self) -> np.ndarray:
        """When the job can start: its submission, or its input if later."""
        return np.asarray(np.maximum(self.submit_s, self.input_s))

    @property
    def peak(self) -> np.ndarray:
        return np.asarray(self.par.max(axis=1))


@dataclass(frozen=True)
class Workload:
    seed: int
    params: WorkloadParams
    templates: Templates
    instances: Instances

    @property
    def horizon_s(self) -> float:
        return self.params.days * DAY_S


def _offsets(period: np.ndarray, share: float, rng: np.random.Generator) -> np.ndarray:
    """Submit offsets within the period, clustered at the start of the hour (module doc)."""
    n = period.size
    hour_slots = np.maximum(np.floor(np.minimum(period, DAY_S) / HOUR_S), 1.0)
    hour = np.floor(rng.random(n) * hour_slots) * HOUR_S
    u = rng.random(n)
    quarter = rng.integers(1, 4, n) * 900.0
    uniform = rng.random(n) * np.minimum(period, HOUR_S)
    minute = np.where(u < share, 0.0, np.where(u < share + (1 - share) / 5, quarter, uniform))
    off = np.where(period >= HOUR_S, hour + minute, rng.random(n) * period * 0.2)
    return np.asarray(np.minimum(off + rng.random(n) * 30.0, period - 60.0))


def _templates(p: WorkloadParams, rng: np.random.Generator) -> Templates:
    t = p.templates
    periods = np.array([x for x, _ in PERIOD_MIX])
    shares = np.array([s for _, s in PERIOD_MIX])
    counts = np.floor(shares / shares.sum() * t).astype(int)
    counts[np.argsort(-shares, kind="stable")[: t - counts.sum()]] += 1
    period = rng.permutation(np.repeat(periods, counts))
    offset = _offsets(period, p.hour_start_share, rng)
    n_stages = rng.integers(1, MAX_STAGES + 1, t)
    has = np.arange(MAX_STAGES)[None, :] < n_stages[:, None]
    first = np.clip(np.round(np.exp(rng.normal(np.log(20.0), 1.0, t))), 2, 400)
    narrowing = np.concatenate([np.ones((t, 1)), rng.uniform(0.1, 0.8, (t, MAX_STAGES - 1))], axis=1)
    par = np.where(has, np.maximum(np.round(first[:, None] * np.cumprod(narrowing, axis=1)), 1), 0)
    total_min = np.clip(period / 60.0 * rng.uniform(0.03, 0.25, t), 3.0, 360.0)
    split = rng.dirichlet(np.ones(MAX_STAGES), t) * has
    split /= split.sum(axis=1, keepdims=True)
    stage_min = np.where(has, np.maximum(np.round(split * total_min[:, None]), 1.0), 0.0)
    sigma = rng.uniform(*p.input_sigma, t)
    late = rng.uniform(0.0, p.late_input_max, t)
    slack = np.exp(rng.normal(np.log(p.slack_median), p.slack_sigma, t))
    dur_s = stage_min.sum(axis=1) * 60.0
    read = np.minimum(offset + 120.0 + dur_s * (1.0 + slack), offset + period - 60.0)
    u = rng.random(t)
    irregular = u < p.irregular_read_share
    read = np.where((u >= p.irregular_read_share) & (u < p.irregular_read_share + p.unread_share), np.nan, read)
    # consumer: a template with the same or a longer period, or egress
    reader = np.full(t, -1)
    egress = rng.random(t) < p.egress_share
    order = np.argsort(period, kind="stable")
    pos = np.searchsorted(period[order], period, side="left")
    pick = pos + np.floor(rng.random(t) * (t - pos)).astype(int)
    reader = np.where(egress, -1, order[np.minimum(pick, t - 1)])
    reader = np.where(reader == np.arange(t), -1, reader)  # a job is not its own consumer
    large = rng.random(t) < p.large_delta_share
    delta_day = np.where(large, rng.uniform(1.0, p.days - 1.0, t), np.nan)
    delta_factor = np.where(large, rng.uniform(0.6, 1.8, t), 1.0)
    return Templates(period, offset, par.astype(float), stage_min, sigma, late, read, irregular, reader,
                     delta_day, delta_factor)


def _instances(tp: Templates, p: WorkloadParams, rng: np.random.Generator) -> Instances:
    horizon = p.days * DAY_S
    n_per = np.floor((horizon - tp.offset_s) / tp.period_s).astype(int) + 1
    n_per = np.where(tp.offset_s + (n_per - 1) * tp.period_s >= horizon, n_per - 1, n_per)
    tmpl = np.repeat(np.arange(tp.count), n_per)
    idx = np.arange(tmpl.size) - np.repeat(np.cumsum(n_per) - n_per, n_per)
    submit = tp.offset_s[tmpl] + idx * tp.period_s[tmpl] + rng.random(tmpl.size) * 30.0
    n = tmpl.size
    day = submit / DAY_S
    # run-to-run variance: input size, code deltas, hardware
    size = np.exp(rng.normal(0.0, tp.input_sigma[tmpl]))
    small = rng.random(tp.count) < p.small_delta_share
    small_day = np.where(small, rng.uniform(1.0, p.days - 1.0, tp.count), np.inf)
    small_factor = rng.uniform(0.9, 1.1, tp.count)
    code = np.where(day >= np.nan_to_num(tp.delta_day, nan=np.inf)[tmpl], tp.delta_factor[tmpl], 1.0)
    code = code * np.where(day >= small_day[tmpl], small_factor[tmpl], 1.0)
    sku2 = rng.random(n) < p.sku2_share
    speed = np.where(sku2, p.sku2_slowdown, 1.0)
    par = np.where(tp.stage_par[tmpl] > 0, np.maximum(np.round(tp.stage_par[tmpl] * np.sqrt(size)[:, None]), 1), 0)
    work = tp.stage_par[tmpl] * tp.stage_min[tmpl] * (size * code * speed)[:, None]
    # stragglers: a one-container tail after a stage, 30–150 % of its duration
    strag = (rng.random((n, MAX_STAGES)) < p.straggler_prob) & (par > 0)
    tail = np.where(strag, tp.stage_min[tmpl] * rng.uniform(0.3, 1.5, (n, MAX_STAGES)) * speed[:, None], 0.0)
    w = np.zeros((n, 2 * MAX_STAGES))
    q = np.zeros((n, 2 * MAX_STAGES))
    w[:, 0::2], q[:, 0::2] = work, par
    w[:, 1::2], q[:, 1::2] = tail, np.where(strag, 1.0, 0.0)
    w, q = _compact(w, q)
    # failures: a retried run repeats its phases after a failed part; a terminal one stops part-way
    u = rng.random(n)
    cut = rng.uniform(0.1, 0.9, n)
    retry = u < p.retry_prob
    fail = (u >= p.retry_prob) & (u < p.retry_prob + p.fail_prob)
    head_w, head_q = _truncate(w, q, cut)
    full_w = np.concatenate([np.where(retry[:, None], head_w, w), np.where(retry[:, None], w, 0.0)], axis=1)
    full_q = np.concatenate([np.where(retry[:, None], head_q, q), np.where(retry[:, None], q, 0.0)], axis=1)
    full_w = np.where(fail[:, None], np.concatenate([head_w, np.zeros_like(head_w)], axis=1), full_w)
    full_q = np.where(fail[:, None], np.concatenate([head_q, np.zeros_like(head_q)], axis=1), full_q)
    full_w, full_q = _compact(full_w, full_q)
    phases = (full_w > 0).sum(axis=1)
    # provenance
    period = tp.period_s[tmpl]
    p_start = np.floor(submit / period) * period
    lead = rng.uniform(60.0, 600.0, n)
    late = rng.random(n) < tp.late_prob[tmpl]
    delay = np.where(late, np.exp(rng.normal(np.log(0.3), 0.8, n)) * tp.duration_min[tmpl] * 60.0, 0.0)
    input_s = submit - lead + delay
    read = _reads(tp, tmpl, p_start, rng, p.read_noise)
    order = np.lexsort((tmpl, submit))
    return Instances(tmpl[order], submit[order], input_s[order], read[order], full_w[order], full_q[order],
                     phases[order], ~fail[order], sku2[order])


def _compact(w: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Move the non-empty phases of every row to the front (order kept), padded to MAX_PHASES."""
    keep = w > 0
    order = np.argsort(~keep, axis=1, kind="stable")
    w2, q2 = np.take_along_axis(w, order, 1), np.take_along_axis(q, order, 1)
    out_w, out_q = np.zeros((w.shape[0], MAX_PHASES)), np.zeros((w.shape[0], MAX_PHASES))
    k = min(MAX_PHASES, w.shape[1])
    out_w[:, :k], out_q[:, :k] = w2[:, :k], q2[:, :k]
    return out_w, np.where(out_w > 0, out_q, 0.0)


def _truncate(w: np.ndarray, q: np.ndarray, frac: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first `frac` of every row's work (the part a failed attempt ran)."""
    total = w.sum(axis=1, keepdims=True)
    before = np.cumsum(w, axis=1) - w
    keep = np.clip(frac[:, None] * total - before, 0.0, w)
    return keep, np.where(keep > 0, q, 0.0)


def _reads(tp: Templates, tmpl: np.ndarray, p_start: np.ndarray, rng: np.random.Generator,
           noise: float) -> np.ndarray:
    """First read of each instance's output (absolute s, nan = never): the consumer's fixed time
    with noise; a consumer with a longer period reads at its own next run after that time; an
    irregular one at a uniform time of the period."""
    n = tmpl.size
    period = tp.period_s[tmpl]
    rel = tp.read_offset_s[tmpl]
    rel = rel + rng.normal(0.0, 1.0, n) * noise * np.nan_to_num(rel)
    rel = np.where(tp.read_irregular[tmpl], tp.offset_s[tmpl] + rng.random(n) * period, rel)
    read = p_start + rel
    rd = tp.reader[tmpl]
    r_period = np.where(rd >= 0, tp.period_s[np.maximum(rd, 0)], 0.0)
    slower = r_period > period
    r_next = np.ceil((read - tp.offset_s[np.maximum(rd, 0)]) / np.where(slower, r_period, 1.0))
    r_time = r_next * r_period + tp.offset_s[np.maximum(rd, 0)]
    return np.asarray(np.where(slower, r_time, read))


def recurring_version(params: WorkloadParams | None = None) -> str:
    """`RECURRING_VERSION` plus a hash of the calibration (parameters, period mix), for results JSON."""
    from .provisioning import CLASSES

    text = repr((params or WorkloadParams(), PERIOD_MIX, CLASSES))
    return f"{RECURRING_VERSION}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def generate(seed: int, params: WorkloadParams | None = None) -> Workload:
    """A month of recurring jobs (module doc); the same seed and parameters give the same arrays."""
    p = params or WorkloadParams()
    if p.templates < len(PERIOD_MIX) or p.days <= 0:
        raise ValueError(f"need at least {len(PERIOD_MIX)} templates and a positive horizon")
    tp = _templates(p, rng_for(seed, "recurring", "templates"))
    inst = _instances(tp, p, rng_for(seed, "recurring", "instances"))
    return Workload(seed, p, tp, inst)
