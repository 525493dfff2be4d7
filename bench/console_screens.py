"""`make docs-screens`: a PNG of each console page in docs/console/, taken with the console tests'
browser harness (`sextant_admission.console_testing`: the recorded platform log, tenants alpha and
beta, 200 workloads of tenant `bulk`; headless Debian chromium), signed in as the operator. The
past-position screen is at the recorded log's busiest position (most cores in use).

    .venv/bin/python bench/console_screens.py [--out docs/console]

A 1100×720 viewport (the top of each page), palette-quantised and optimised by Pillow to keep the
files small. Not part of `make test`.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOG = ROOT / "tests" / "fixtures" / "platform-log.jsonl.gz"
VIEWPORT = {"width": 1100, "height": 720}


def shrink(png: bytes) -> bytes:
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=64)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


def busiest(log: list[object]) -> int:
    """The log position where the most cores are in use (the past-position screen shows its heat map)."""
    from sextant_core.state.evolve import fold

    best, at, state = -1, 1, None
    for env in log:
        state = fold([env], state) if state is not None else fold([env])
        used = sum(s.used_cores for s in state.sorted_servers())
        if used > best:
            best, at = used, state.position
    return at


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "docs" / "console"))
    args = ap.parse_args()
    from sextant_admission.console_testing import Signed, chromium, console_world
    from sextant_cli.demo import read_recorded
    from sextant_infra.postgres import PostgresNode

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    node = PostgresNode(die_with_parent=True)
    node.start()
    try:
        with console_world(node, read_recorded(LOG), bulk=200) as world, chromium() as browser:
            shots = {"overview": "/console/", "workloads": "/console/workloads",
                     "workload": f"/console/workloads/{world.placed_wid}",
                     "decision": f"/console/workloads/{world.placed_wid}/decisions/{world.decision_id}",
                     "log": "/console/log", "log-as-of": f"/console/log?at={busiest(world.log)}",
                     "servers": "/console/servers", "tenants": "/console/tenants", "tenant": "/console/tenants/bulk"}
            session = Signed(browser, world, "ops", viewport=VIEWPORT)
            for name, path in shots.items():
                session.goto(path)
                session.page.wait_for_load_state("load")
                if session.page.locator("[data-chart]").count():
                    session.page.locator("[data-drawn=true]").first.wait_for(timeout=10_000)
                data = shrink(session.page.screenshot(full_page=False))
                (out / f"{name}.png").write_bytes(data)
                print(f"wrote {out / (name + '.png')} ({len(data) // 1024} KiB)")
            assert session.errors == [], session.errors
            session.close()
    finally:
        node.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
