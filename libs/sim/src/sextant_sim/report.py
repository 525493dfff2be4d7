"""What a twin run leaves behind: summary tables (rich), `summary.json`, and PNG plots (matplotlib).

- `summary_table(...)` / `compare_table(...)`: the tables `sextant sim run|compare` print;
- `compare_json(...)`: the `sim compare --json` document, exactly `{"scenario", "seed",
  "twin_version", "profiles": {NAME: {...metrics of metrics.py...}}}` (the per-workload
  `normalized_performance` list is left out);
- `write_outputs(dir, ...)`: `summary.json`, `performance.png` (normalised performance of every
  workload, sorted worst to best, with the 0.95 QoS line — Paragon Figs. 8/13) and
  `utilisation.png` (per-server CPU utilisation over time, servers in catalogue order — Paragon
  Fig. 11 / Quasar Fig. 11 heat maps), plus `stragglers.json` when the scenario has analytics jobs.
Plots use matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.table import Table

from .groundtruth import TWIN_VERSION
from .metrics import QOS

if TYPE_CHECKING:
    from .runner import RunResult

HEADLINE = ("qos_met_fraction", "mean_normalized_performance", "mean_performance_vs_target", "cpu_utilization",
            "overprovisioning", "workloads", "completed", "failed", "unfinished", "wall_seconds")
SHORT = {"qos_met_fraction": "QoS met", "mean_normalized_performance": "mean perf",
         "mean_performance_vs_target": "perf/target", "cpu_utilization": "CPU util",
         "overprovisioning": "overprov", "workloads": "workloads", "completed": "done", "failed": "failed",
         "unfinished": "unfinished", "wall_seconds": "wall s", "events_per_second": "events/s"}


def _fmt(key: str, v: Any) -> str:
    if isinstance(v, float) and key != "wall_seconds" and key != "events_per_second":
        return f"{v:.3f}"
    if isinstance(v, float):
        return f"{v:.1f}"
    return str(v)


def summary_table(scenario: str, profile: str, seed: int, summary: dict[str, Any],
                  twin_version: str = TWIN_VERSION) -> Table:
    t = Table(title=f"{scenario} · {profile} · seed {seed} · twin {twin_version}")
    t.add_column("metric")
    t.add_column("value", justify="right")
    for k in (*HEADLINE, "events", "events_per_second", "simulated_seconds"):
        if k in summary:
            t.add_row(k, _fmt(k, summary[k]))
    deg = summary.get("degradation", {})
    for k in ("heterogeneity_mean", "interference_mean"):
        if k in deg:
            t.add_row(f"degradation {k}", _fmt(k, deg[k]))
    for k, v in summary.get("failures", {}).items():
        t.add_row(f"failed: {k}", str(v))
    return t


def compare_table(doc: dict[str, Any], extra: str = "") -> Table:
    t = Table(title=f"{doc['scenario']} · seed {doc['seed']} · twin {doc['twin_version']}{extra}")
    t.add_column("profile")
    cols = (*HEADLINE, "events_per_second")
    for k in cols:
        t.add_column(SHORT[k], justify="right")
    for name, s in doc["profiles"].items():
        t.add_row(name, *(_fmt(k, s.get(k, "")) for k in cols))
    return t


def compare_json(scenario: str, seed: int, results: dict[str, dict[str, Any]],
                 twin_version: str = TWIN_VERSION) -> dict[str, Any]:
    return {"scenario": scenario, "seed": seed, "twin_version": twin_version,
            "profiles": {p: {k: v for k, v in s.items() if k != "normalized_performance"}
                         for p, s in results.items()}}


def _plots(out: Path, res: RunResult, title: str) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    perf = np.sort(np.asarray(res.summary["normalized_performance"], dtype=float))
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(np.arange(1, len(perf) + 1), perf, lw=1.5)
    ax.axhline(QOS, color="grey", ls="--", lw=1, label=f"QoS ({QOS})")
    ax.set_xlabel("workloads (sorted worst to best)")
    ax.set_ylabel("normalised performance")
    ax.set_ylim(0, max(1.1, float(perf.max()) * 1.05 if len(perf) else 1.1))
    ax.set_title(title)
    ax.legend(loc="lower right")
    fig.tight_layout()
    paths.append(out / "performance.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    heat = res.engine.heatmap or []
    if heat:
        times = np.array([t for t, _ in heat])
        m = np.stack([np.asarray(u, dtype=float) for _, u in heat], axis=1)  # servers × samples
        fig, ax = plt.subplots(figsize=(8, 4.5))
        im = ax.imshow(np.clip(m, 0, 1), aspect="auto", origin="lower", cmap="viridis", vmin=0, vmax=1,
                       extent=(float(times[0]), float(times[-1]), 0, m.shape[0]), interpolation="nearest")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("server (catalogue order)")
        ax.set_title(f"CPU utilisation · {title}")
        fig.colorbar(im, ax=ax, label="busy cores / cores")
        fig.tight_layout()
        paths.append(out / "utilisation.png")
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)
    return paths


def write_outputs(out: Path, scenario: str, profile: str, seed: int, res: RunResult) -> list[Path]:
    """summary.json, the plots and (analytics scenarios) stragglers.json into `out`."""
    from sextant_contracts import codec

    from . import stragglers

    out.mkdir(parents=True, exist_ok=True)
    doc = {"scenario": scenario, "profile": profile, "seed": seed, "twin_version": res.engine.setup.twin_version,
           "log_sha256": res.log_sha256, "summary": res.summary}
    paths = [out / "summary.json"]
    paths[0].write_text(codec.dumps(doc) + "\n")
    truth = stragglers.truth(res.engine)
    if truth.intrinsic_tasks:
        paths.append(out / "stragglers.json")
        paths[-1].write_text(codec.dumps(truth.as_json()) + "\n")
    return paths + _plots(out, res, f"{scenario} · {profile} · seed {seed}")
