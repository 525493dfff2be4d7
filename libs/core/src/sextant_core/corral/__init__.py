"""Corral: data-aware planning for recurring analytics (jalaparti.md §3.1, §4), pure and seeded.

`mrcute` (completion-time models A and B, DAG critical path, profile estimation, input-size
prediction), `selector` (Oktopus virtual clusters, imbalance, Corral-I/R/T, Baseline, Strawman),
`planner` (racks and priorities for recurring jobs, LP-Batch lower bound).
"""
