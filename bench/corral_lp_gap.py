"""W2's LP-Online gap on sub-instances: the plan, the best list schedule and the bound (docs/corral/online.md).

    .venv/bin/python bench/corral_lp_gap.py [--seeds 6,7,10] [--tiny 6]

Per seed: W2's online scenario (quick task counts), its two largest jobs and `--tiny` of the jobs
arriving while they could run (a seeded draw), on the 7 racks, with the Corral twin's latencies
L'_j(r). Printed: Corral's online plan (`planner.plan`, keep-if-better), the best of every list
schedule (every order of the jobs × every width of the two big jobs, the others on one rack;
`planner._objective`, the plan's own model) and LP-Online on the same latencies. The best list
schedule is an upper bound of the optimum, LP-Online a lower one. Diagnosis only, no claims.
"""

from __future__ import annotations

import sextant_contracts  # noqa: F401  (before numpy: pins its SIMD kernels, sextant_contracts/simd.py)

# isort: split
import argparse
import itertools
import sys

import numpy as np
from quality import seeds_of


def sub_instance(seed: int, tiny: int) -> tuple[np.ndarray, np.ndarray, list[int]]:
    from sextant_sim.corral.experiment import corral_latency
    from sextant_sim.corral.network import Topology
    from sextant_sim.corral.workloads import w2, with_arrivals

    jobs = with_arrivals(w2(seed, 4.0), seed)
    lat = corral_latency(jobs, Topology(), plan_oversubscription=5.0)
    arr = np.array([j.arrival for j in jobs])
    big = np.argsort([-j.input_bytes for j in jobs], kind="stable")[:2].tolist()
    t0, t1 = arr[big].min(), arr[big].max() + lat[big].min(axis=1).max()
    inside = [i for i in np.argsort(arr, kind="stable").tolist() if t0 <= arr[i] <= t1 and i not in big]
    picked = np.random.default_rng(seed).choice(inside, size=min(tiny, len(inside)), replace=False).tolist()
    sel = sorted(big + picked)
    return lat[sel], arr[sel], [sel.index(b) for b in big]


def best_list_schedule(lat: np.ndarray, arr: np.ndarray, big: list[int]) -> tuple[float, tuple[int, ...]]:
    from sextant_core.corral.planner import _objective

    n, racks = lat.shape
    best, best_w = np.inf, (1, 1)
    for wb in itertools.product(range(1, racks + 1), repeat=len(big)):
        w = [1] * n
        for j, r in zip(big, wb, strict=True):
            w[j] = r
        lw = [float(lat[j, w[j] - 1]) for j in range(n)]
        for order in itertools.permutations(range(n)):
            v = _objective(lw, list(order), w, arr.tolist(), racks, True)
            if v < best:
                best, best_w = v, wb
    return float(best), best_w


def main() -> int:
    from sextant_core.corral.planner import lp_online_bound, plan

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="6,7,10")
    ap.add_argument("--tiny", type=int, default=6)
    args = ap.parse_args()
    for seed in seeds_of(args.seeds):
        lat, arr, big = sub_instance(seed, args.tiny)
        pl = plan(lat, arr, online=True, keep_if_better=True)
        best, widths = best_list_schedule(lat, arr, big)
        lp = lp_online_bound(lat, arr)
        print(f"seed {seed} ({len(arr)} jobs): plan {pl.objective:.2f} (big jobs on {pl.widths[big].tolist()} racks), "
              f"best list schedule {best:.2f} (on {list(widths)}), LP-Online {lp:.2f}; plan vs LP "
              f"{pl.objective / lp - 1:+.1%}, best vs LP {best / lp - 1:+.1%}, plan vs best {pl.objective / best - 1:+.1%}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
