"""Simulator of capacity sharing between virtual clusters (spec `vc_fairness.md` §2.5): the
policies of `sextant_core.fairness` driven by the LCG grid log (28 groups as VCs) or the spec's
synthetic six-VC month.

Modules: `workloads` (jobs, the LCG loader and capacity rules, the synthetic generator), `engine`
(the event-driven loop), `metrics` (stretch, load, similar-load VCs, overload days). The
benchmark is bench/fairness.py; how it works: docs/fairness.md.
"""
