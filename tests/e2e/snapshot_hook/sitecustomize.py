"""e2e only: how often the decider services of the platform test save snapshots.

The kit saves a decider's snapshot every 5 000 folded events, at most every 30 s, and has no
setting for it (`sextant_kit.runtime.decider_task` builds its `DeciderHandler` with the defaults).
The e2e run logs about 4 500 events, so without this no snapshot would ever be stored, and neither
the restore at restart nor `sextant replay --from-snapshot` would be exercised. The test puts this
directory on the decider processes' PYTHONPATH with `SEXTANT_E2E_SNAPSHOT_EVERY` /
`SEXTANT_E2E_SNAPSHOT_MIN_INTERVAL_S`; Python imports `sitecustomize` at start-up, and only these
two defaults change — when and how snapshots are written and restored is the kit's own code.
"""

import os

_every = os.environ.get("SEXTANT_E2E_SNAPSHOT_EVERY")
if _every:
    from sextant_kit.runtime import DeciderHandler

    DeciderHandler.__init__.__kwdefaults__.update(  # type: ignore[union-attr]
        snapshot_every=int(_every),
        snapshot_min_interval_s=float(os.environ.get("SEXTANT_E2E_SNAPSHOT_MIN_INTERVAL_S", "30")))
