"""Recurring jobs (Morpheus, OSDI'16; spec/morpheus.md): the pure core, in two halves.

History analysis (what a recurring job is and what it will do):

- `periodicity` — templates, arrivals, period from submit gaps, CV filter, natural-period label;
- `arrivals` — the next submit slots from the fitted period, and their score;
- `runtime` — a per-template run-time P95 prediction, calibrated on a held-out tail of history;
- `slo` — the deadline contract from provenance: a = P95 input-available, d = P50 first read of
  the output, the actionable-deadline test, the consumer-period rule;
- `analysis` — the three together on a job trace split into training and test windows.

Reservation planning (how the cluster keeps the promise): the skyline LP (`skyline`), the
time-indexed plan (`plan`), LowCost packing (`lowcost`), the capacity ledger (`ledger`) and
dynamic reprovisioning (`dra`).
"""
