"""A service's short-horizon load forecast from its own observed load (docs/adaptation/diurnal.md).

Pure arithmetic on the (time s, offered load) history the state keeps per service
(`WorkloadState.load_history`, folded from `PerformanceObserved.offered`), so replay re-derives
every forecast, and with it every adjustment sized on it.

Two forecasters, the seasonal one first when it applies:

- **seasonal** (seasonal-naive with a level correction, Holt–Winters' seasonal term alone): once
  the history reaches one `season_s` back from the forecast's target time, the load a season
  before the target, scaled by today's level over that season's level at the same offset — the
  diurnal shape repeats, so the ramp is known before it starts.
- **trend** (a local linear fit — Holt's level and trend fitted by least squares over the last
  `window_s`): level + slope × horizon. It leads a steady ramp by the horizon and turns down
  just after a peak.

Either way the *upper* forecast adds a safety margin: `z` × the RMS of the forecaster's own
errors over the history (each past point forecast from the points before it, the same way),
floored at `min_margin` of the level — so a noisy series gets more headroom, a smooth one less.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

History = Sequence[tuple[float, float]]  # (time s, offered load), oldest first


@dataclass(frozen=True, slots=True)
class ForecastParams:
    horizon_s: float = 900.0  # how far ahead capacity must hold (next decision + the move's settling)
    window_s: float = 3600.0  # the trend's fit window
    min_points: int = 3  # fewer points in the window: no trend (the level is the last load)
    season_s: float | None = 86400.0  # the repeating period (None: trend only)
    z: float = 1.5  # the margin in RMS errors
    min_margin: float = 0.02  # the margin's floor, relative to the level
    errors_kept: int = 6  # the RMS runs over the latest this-many one-step errors


@dataclass(frozen=True, slots=True)
class LoadForecast:
    """`point`: the load expected at `horizon_s` ahead; `upper` = point + margin; `level`: the
    fitted load now; `kind`: "seasonal", "trend" or "last"."""

    level: float
    point: float
    margin: float
    kind: str

    @property
    def upper(self) -> float:
        return self.point + self.margin

    def describe(self) -> str:
        return f"{self.kind} forecast {self.point:.1f} (+{self.margin:.1f}) from {self.level:.1f}"


def _fit(points: History, at: float) -> tuple[float, float] | None:
    """(level at `at`, slope per s) of the least-squares line through `points`; None if < 2."""
    n = len(points)
    if n < 2:
        return None
    mt = math.fsum(t for t, _ in points) / n
    my = math.fsum(y for _, y in points) / n
    sxx = math.fsum((t - mt) ** 2 for t, _ in points)
    if sxx <= 0:
        return my, 0.0
    slope = math.fsum((t - mt) * (y - my) for t, y in points) / sxx
    return my + slope * (at - mt), slope


def _interp(history: History, t: float) -> float | None:
    """The history's load at `t` (linear between neighbours); None outside it."""
    if not history or t < history[0][0] or t > history[-1][0]:
        return None
    lo, hi = 0, len(history) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if history[mid][0] <= t:
            lo = mid
        else:
            hi = mid
    (t0, y0), (t1, y1) = history[lo], history[hi]
    if t1 <= t0:
        return y1
    return y0 + (y1 - y0) * (t - t0) / (t1 - t0)


def _point(history: History, upto: int, horizon_s: float, p: ForecastParams) -> tuple[float, float, str]:
    """(level, point forecast at `horizon_s` after history[upto - 1], kind) from history[:upto]."""
    now, last = history[upto - 1]
    if p.season_s is not None:
        past = history[:upto]
        then = _interp(past, now + horizon_s - p.season_s)
        base = _interp(past, now - p.season_s)
        if then is not None and base is not None and base > 0:
            return last, max(0.0, then * last / base), "seasonal"
    recent = [x for x in history[:upto] if x[0] >= now - p.window_s - 1e-9]
    fit = _fit(recent, now) if len(recent) >= p.min_points else None
    if fit is None:
        return last, last, "last"
    level, slope = fit
    return level, max(0.0, level + slope * horizon_s), "trend"


def forecast(history: History, p: ForecastParams | None = None) -> LoadForecast | None:
    """The forecast `p.horizon_s` after the latest point of `history`; None when it is empty.

    The margin: `p.z` × RMS of the one-step errors (each of the latest `p.errors_kept` points
    forecast from those before it at the gap that separated them), at least `p.min_margin` × level."""
    p = p or ForecastParams()
    if not history:
        return None
    level, point, kind = _point(history, len(history), p.horizon_s, p)
    errs: list[float] = []
    for i in range(max(1, len(history) - p.errors_kept), len(history)):
        gap = history[i][0] - history[i - 1][0]
        _, guess, _ = _point(history, i, gap, p)
        errs.append(history[i][1] - guess)
    rms = math.sqrt(math.fsum(e * e for e in errs) / len(errs)) if errs else 0.0
    margin = max(p.z * rms, p.min_margin * max(level, point))
    return LoadForecast(level=level, point=point, margin=margin, kind=kind)
