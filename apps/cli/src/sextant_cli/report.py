"""The demo's HTML report: a QoS table and plots (matplotlib, PNG files beside the HTML)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any


def write_report(views: list[dict[str, Any]], out: Path,
                 comparison: tuple[str, list[tuple[str, ...]]] | None = None) -> Path:
    """The report page; `comparison` = (profile, `baseline.comparison_rows`) adds the table of the
    platform's QoS beside the twin's least-loaded baseline on the same workloads."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ratios = sorted(v["qos"]["ratio_to_target"] for v in views if v.get("qos"))
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(range(len(ratios)), ratios, drawstyle="steps-post")
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("workloads (sorted)")
    ax.set_ylabel("last measured performance / target")
    ax.set_title("Performance relative to target")
    fig.tight_layout()
    fig.savefig(out / "ratio_sorted.png", dpi=110)
    plt.close(fig)

    states: dict[str, int] = {}
    for v in views:
        states[v["state"]] = states.get(v["state"], 0) + 1
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.bar(list(states), list(states.values()))
    ax.set_title("Workloads by final state")
    fig.tight_layout()
    fig.savefig(out / "states.png", dpi=110)
    plt.close(fig)

    rows = "".join(
        f"<tr><td>{html.escape(v['name'] or v['id'])}</td><td>{v['kind']}</td><td>{v['state']}</td>"
        f"<td>{'' if not v.get('qos') else ('met' if v['qos']['met'] else 'missed')}</td>"
        f"<td>{'' if not v.get('qos') else round(v['qos']['ratio_to_target'], 3)}</td>"
        f"<td>{'' if not v.get('allocation') else len(v['allocation']['assignments'])}</td></tr>"
        for v in sorted(views, key=lambda v: v["submitted_at"]))
    compared = ""
    if comparison is not None:
        profile, crows = comparison
        compared = ("<h2>Against the twin's least-loaded baseline, same workloads</h2><table><tr><th>kind</th>"
                    f"<th>workloads</th><th>QoS met: platform ({html.escape(profile)})</th>"
                    "<th>QoS met: twin least-loaded</th><th>mean ratio: platform</th><th>mean ratio: twin</th></tr>"
                    + "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in crows)
                    + "</table>")
    page = out / "report.html"
    page.write_text(f"""<!doctype html><html><head><meta charset="utf-8"><title>Sextant demo</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 6px}}</style>
</head><body><h1>Sextant demo report</h1>
<p>{len(views)} workloads; {states.get('completed', 0)} completed, {states.get('failed', 0)} failed.</p>
{compared}
<img src="ratio_sorted.png"> <img src="states.png">
<table><tr><th>workload</th><th>kind</th><th>state</th><th>QoS</th><th>ratio</th><th>servers</th></tr>{rows}</table>
</body></html>""")
    return page
