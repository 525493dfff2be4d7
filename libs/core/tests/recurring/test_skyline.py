"""The skyline LP (recurring/skyline.py): small cases with a known optimum, the coverage the LP
guarantees for α, rounding that never under-covers, determinism, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_core.recurring.skyline import SkylineError, as_matrix, final_debts, fit_skyline


@pytest.mark.parametrize(("runs", "alpha", "skyline", "epsilon"), [
    # one run: s = the run costs nothing (no over-allocation, no debt)
    ([[3, 5, 1]], 0.01, (3, 5, 1), 0.0),
    # K = 1, runs 2 and 4: for s in [2, 4] the objective is α(s − 2)/2 + (1 − α)(4 − s)/2,
    # decreasing when α < 1/2 -> s = 4; increasing when α > 1/2 -> s = 2, leaving run 4 short by 2:
    # ε = (1/2)·(2/4) = 0.25
    ([[2], [4]], 0.01, (4,), 0.0),
    ([[2], [4]], 0.9, (2,), 0.25),
    # debt catch-up: runs [4, 0] and [0, 4]. Zero debt needs s_2 ≥ 4; then over = s_1 + 4 + s_1
    # (summed over the runs) -> s = (0, 4), phase 1 V = α·4/2. Phase 2 adds β·ε with
    # ε = (1/2)(4/4) = 0.5 from run 1's first step; raising s_1 by x costs α·x more than it saves
    # (β·x/8 = 0.1·2α·x/8), so s stays (0, 4).
    ([[4, 0], [0, 4]], 0.01, (0, 4), 0.5),
], ids=["one-run", "alpha-small", "alpha-large", "debt-catch-up"])
def test_known_optima(runs: list[list[int]], alpha: float, skyline: tuple[int, ...], epsilon: float) -> None:
    fit = fit_skyline(runs, alpha=alpha, resolution=1)
    assert fit.skyline == skyline
    assert fit.epsilon == pytest.approx(epsilon, abs=1e-9)


def test_two_phase_beta_is_a_tenth_of_phase_one() -> None:
    fit = fit_skyline([[4, 0], [0, 4]], alpha=0.01, resolution=1)
    assert fit.phase1_value == pytest.approx(0.02)  # V = α·(4 + 0)/2: run 1 over-allocated by 4 at step 2
    assert fit.beta == pytest.approx(0.1 * fit.phase1_value)


def test_zero_padded_runs_of_different_lengths() -> None:
    assert as_matrix([[1, 2, 3], [4]]).tolist() == [[1, 2, 3], [4, 0, 0]]


runs_strategy = st.lists(st.lists(st.integers(0, 20), min_size=1, max_size=12), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None)
@given(runs=runs_strategy, alpha=st.sampled_from([0.01, 0.05, 0.2, 0.5]))
def test_coverage_of_every_run_within_the_alpha_slack(runs: list[list[int]], alpha: float) -> None:
    # at the optimum at most α·N/(1 − α) runs end in debt (module doc); the integer skyline
    # (rounded up) leaves no run more debt than the fractional one.
    s = as_matrix(runs)
    if s.sum() == 0:
        return
    fit = fit_skyline(runs, alpha=alpha, resolution=1)
    frac_debt = final_debts(s, fit.fractional)
    whole_debt = final_debts(s, fit.skyline)
    n = len(runs)
    assert int((frac_debt > 1e-6).sum()) <= alpha * n / (1 - alpha) + 1e-9
    assert (whole_debt <= frac_debt + 1e-6).all()
    assert all(w >= f - 1e-6 for w, f in zip(fit.skyline, fit.fractional, strict=True))  # never rounds down
    assert all(w <= np.floor(f + 1e-6) + 1 for w, f in zip(fit.skyline, fit.fractional, strict=True))
    if alpha * n < 1 - alpha:
        assert (whole_debt <= 1e-6).all()  # every run's demand fits under the skyline (debt model)


def test_coarse_resolution_repeats_block_values_and_keeps_the_area() -> None:
    rng = np.random.default_rng(1)
    runs = rng.integers(0, 50, (6, 60)).astype(float)
    fine, coarse = fit_skyline(runs, resolution=1), fit_skyline(runs, resolution=5)
    assert len(coarse.skyline) == 60
    assert all(len(set(coarse.fractional[i:i + 5])) == 1 for i in range(0, 60, 5))
    assert sum(coarse.fractional) == pytest.approx(sum(fine.fractional), rel=0.05)


def test_same_runs_same_skyline_byte_for_byte() -> None:
    rng = np.random.default_rng(7)
    runs = rng.integers(0, 30, (10, 120)).astype(float)
    a, b = fit_skyline(runs), fit_skyline(runs)
    assert a == b
    assert np.asarray(a.fractional).tobytes() == np.asarray(b.fractional).tobytes()


@pytest.mark.parametrize(("runs", "kwargs", "match"), [
    ([], {}, "no runs"),
    ([[]], {}, "no runs"),
    ([[1, -2]], {}, "negative"),
    ([[1, float("nan")]], {}, "non-finite"),
    ([[1]], {"alpha": 1.0}, "alpha"),
    ([[1]], {"alpha": 0.0}, "alpha"),
    ([[1]], {"resolution": 0}, "resolution"),
], ids=["empty", "empty-run", "negative", "nan", "alpha-1", "alpha-0", "resolution-0"])
def test_bad_input_is_a_clear_error(runs: list[list[float]], kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(SkylineError, match=match):
        fit_skyline(runs, **kwargs)  # type: ignore[arg-type]
