"""Twin support for recurring jobs (Morpheus, OSDI'16; spec/morpheus.md §7; docs/recurring.md).

- `workload` — a seeded, vectorised month of recurring batch jobs: natural periods clustered at
  the start of the hour, staged skylines, run-to-run variance, late inputs, provenance;
- `provisioning` — the user's static allocations (Fig. 2a);
- `adhoc` — ad-hoc demand up to 75 % of the cluster;
- `execution` — the minute-stepped cluster: guarantees (user allocations or a plan's
  reservations) + opportunistic fair share, elastic jobs with the debt semantics;
- `evaluation` — provenance for the SLO extractor, SLO misses, the month's 70/30 measurement.

Nothing here is a policy: the planning side (`sextant_core.recurring`) sees only what
`evaluation.provenance` and the recorded skylines expose, never the templates' truths.
"""
