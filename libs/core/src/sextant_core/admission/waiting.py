"""ARQ's waiting-time bound (Paragon §4, Eq. 2) and the free-server probability it needs.

**Slack.** Paragon's QoS is 95 % of the optimal performance, so queueing plus profiling may take
at most 5 % of the optimal compute time CT_a:  wt + P_a < 0.05 · CT_a. [GAP] (spec §9 item 11)
the paper calls S_a = 1.05·CT_a − P_a the slack; the time the constraint leaves for waiting is
0.05·CT_a − P_a, and that is what we use:  S_a = 0.05 · CT_a − P_a  (P_a = time already spent
since submission: profiling, classification, queueing so far).

**Free-server probability.** [GAP] (spec §9 item 12: fitting family and CDF derivation unstated;
the paper's fitted busy periods "resemble a normal distribution"). Ours is memoryless: each of the
m busy slots that could serve the workload frees up at rate 1/B, B the mean residual busy time,
so  Pr[t] = 1 − exp(−m t / B). B is estimated by the mean *age* of running workloads (for a
stationary renewal process the mean age equals the mean residual life, E[D²] / 2E[D]); the caller
samples it from the state.

**Eq. 2.** For the preferred queue i and the best diversion j (a pool available now, so
wt_j = 0 and Pr_j = 1), maximise over the switch time t

    V_i(t) = (S_a − t) · Q_i · Pr_i[t]      (wait on i until t)       vs     V_j = S_a · Q_j

subject to t + P_a < 0.05·CT_a, i.e. 0 ≤ t < S_a. [GAP] Q_i, Q_j: the resource quality of the
queues *for this workload*: the predicted performance ratio (vs. its requirement, ≤ 1) of the best
server available in the pool, raised to `exponent` (≥ 1: how much a shortfall is worth avoiding;
1 reads Eq. 2 linearly); Q_i = 1 for the workload's own pool by definition. The maximisation runs
on a grid of `points` switch times (no clock, no iteration to convergence). Waiting wins iff
max_t V_i(t) > V_j; the expected wait is E[min(T_free, t*)] = (1 − e^{−λt*}) / λ, λ = m / B.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

QOS_SLACK = 0.05


def slack(ct: float, spent: float, fraction: float = QOS_SLACK) -> float:
    """S_a = fraction · CT_a − P_a (seconds; negative when the budget is already spent)."""
    return fraction * ct - spent


def free_probability(t: float | np.ndarray, busy: int, mean_residual_s: float) -> np.ndarray:
    """Pr[at least one of `busy` slots frees within t] = 1 − exp(−busy · t / B)."""
    lam = busy / max(mean_residual_s, 1e-9)
    out: np.ndarray = 1.0 - np.exp(-lam * np.asarray(t, dtype=np.float64))
    return out


@dataclass(frozen=True, slots=True)
class SwitchDecision:
    wait: bool
    switch_at_s: float  # t*: how long to wait on the preferred queue before diverting
    expected_wait_s: float  # E[min(T_free, t*)]
    value_wait: float
    value_switch: float


def switch_time(s_a: float, q_own: float, q_other: float, busy: int, mean_residual_s: float,
                points: int = 64) -> SwitchDecision:
    """Eq. 2 (see the module docstring). With no slack left (s_a ≤ 0) or nothing that can free
    up (busy = 0), waiting never wins."""
    value_switch = max(s_a, 0.0) * q_other
    if s_a <= 0 or busy <= 0 or points < 1:
        return SwitchDecision(False, 0.0, 0.0, 0.0, value_switch)
    t = np.linspace(0.0, s_a, points + 1)[1:-1] if points > 1 else np.array([s_a / 2])
    if len(t) == 0:
        t = np.array([s_a / 2])
    v = (s_a - t) * q_own * free_probability(t, busy, mean_residual_s)
    k = int(np.argmax(v))
    t_star, v_star = float(t[k]), float(v[k])
    lam = busy / max(mean_residual_s, 1e-9)
    expected = (1.0 - math.exp(-lam * t_star)) / lam
    return SwitchDecision(v_star > value_switch, t_star, expected, v_star, value_switch)
