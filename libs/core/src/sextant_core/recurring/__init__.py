"""Recurring jobs (Morpheus, OSDI'16; spec/morpheus.md): the pure core, in two halves.

History analysis (what a recurring job is and what it will do):

- `templates` — template keys from free-form job names (the trace's logical names need none);
- `periodicity` — templates, arrivals, period from submit gaps, CV filter, natural-period label;
- `arrivals` — the next submit slots from the fitted period, and their score;
- `runtime` — a run-time P95 per run: quantile regression on the template's history and the
  submission's hour, weekday, class and burst position, sharper than the template's plain P95;
- `slo` — the deadline contract from provenance: a = P95 input-available, d = P50 first read of
  the output, the actionable-deadline test, the consumer-period rule;
- `analysis` — detection, slots and run times together on a job record split into training
  and test windows (`sextant recurring analyse`, bench/morpheus.py).

Reservation planning (how the cluster keeps the promise): the skyline LP (`skyline`), the
time-indexed plan (`plan`), LowCost packing (`lowcost`), the capacity ledger (`ledger`) and
dynamic reprovisioning (`dra`). How it works: `docs/recurring.md`.
"""
