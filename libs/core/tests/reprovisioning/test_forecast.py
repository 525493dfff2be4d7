"""The service load forecaster (`reprovisioning.forecast`) on synthetic series: it leads a ramp,
turns after a peak, learns a repeating day, and widens its margin with the noise it has seen."""

from __future__ import annotations

import math

import pytest
from sextant_core.reprovisioning.forecast import ForecastParams, forecast

DAY = 86400.0
STEP = 600.0  # one telemetry window


def diurnal(t: float) -> float:
    """The twin's diurnal shape (trough 0.35, peak 1.0 at noon) × 1000 requests/s."""
    return 1000.0 * (0.675 - 0.325 * math.cos(2 * math.pi * t / DAY))


def series(start: float, end: float, f=diurnal, noise: float = 0.0) -> list[tuple[float, float]]:  # type: ignore[no-untyped-def]
    # a deterministic ± noise (alternating sign) so the test needs no random generator
    return [(t, f(t) + (noise if i % 2 else -noise))
            for i, t in enumerate(x * STEP for x in range(int(start / STEP), int(end / STEP) + 1))]


def first_crossing(points: list[tuple[float, float]], level: float) -> float:
    return next(t for t, y in points if y >= level)


def test_no_history_no_forecast() -> None:
    assert forecast([]) is None


def test_one_point_forecasts_itself_with_the_floor_margin() -> None:
    f = forecast([(0.0, 500.0)])
    assert f is not None and f.kind == "last" and f.point == 500.0
    assert f.margin == pytest.approx(0.02 * 500.0)  # min_margin × level


def test_the_trend_forecast_leads_the_morning_ramp() -> None:
    # within the first day (no season yet): at each window, the upper forecast 900 s ahead, from the
    # history up to then, against the load that comes. A ramp-follower that sizes on the last
    # window crosses 800 requests/s when the load does; the forecast must cross before it.
    p = ForecastParams(season_s=None)
    hist = series(0.0, DAY / 2)
    ups = [(t, forecast(hist[: i + 1], p).upper) for i, (t, _) in enumerate(hist) if i >= 2]  # type: ignore[union-attr]
    load_at = first_crossing(hist, 800.0)
    fc_at = first_crossing(ups, 800.0)
    assert fc_at <= load_at - 900.0  # it leads by at least the horizon
    # and on the ramp it covers what comes: upper(t) ≥ load(t + 900 s) wherever the history is an hour long
    for t, up in ups:
        if 3600.0 <= t <= DAY / 2 - 900.0:
            assert up >= diurnal(t + 900.0)


def test_the_trend_forecast_turns_down_just_after_the_peak() -> None:
    p = ForecastParams(season_s=None)
    hist = series(0.0, DAY / 2 + 7200.0)  # two hours past noon's peak
    f = forecast(hist, p)
    assert f is not None and f.kind == "trend"
    assert f.point < hist[-1][1]  # below the load now: reclaim can start right after the peak
    assert f.upper >= diurnal(hist[-1][0] + 900.0)  # still above what comes


def test_a_second_day_is_forecast_from_the_first() -> None:
    # a day and a half of history, an hour before the ramp's steepest point: the seasonal forecast
    # knows the shape, so its point is close to what comes (within 0.5 %)
    hist = series(0.0, DAY + 5 * 3600.0)
    f = forecast(hist)
    assert f is not None and f.kind == "seasonal"
    assert f.point == pytest.approx(diurnal(hist[-1][0] + 900.0), rel=0.005)


def test_the_seasonal_forecast_scales_to_today_s_level() -> None:
    # day 2 runs 20 % above day 1: the forecast follows today's level, not yesterday's
    def grown(t: float) -> float:
        return diurnal(t) * (1.2 if t >= DAY else 1.0)

    hist = series(0.0, DAY + 5 * 3600.0, f=grown)
    f = forecast(hist)
    assert f is not None and f.point == pytest.approx(grown(hist[-1][0] + 900.0), rel=0.005)


def test_noise_widens_the_margin() -> None:
    p = ForecastParams(season_s=None)
    quiet = forecast(series(0.0, 4 * 3600.0), p)
    noisy = forecast(series(0.0, 4 * 3600.0, noise=30.0), p)
    assert quiet is not None and noisy is not None
    assert noisy.margin > 2 * quiet.margin
    assert noisy.margin >= 1.5 * 30.0  # z × RMS error: each point is off the line by ≥ the noise


def test_the_forecast_is_a_pure_function_of_the_history() -> None:
    hist = series(0.0, 6 * 3600.0, noise=12.5)
    assert forecast(hist) == forecast(list(hist)) == forecast(tuple(hist))
