"""Planning: Quasar's joint sizing and assignment on Paragon's interference filters,
Paragon's greedy selector with backtracking, and the `sextant`, `paragon`, `reservation-paragon`
policy sets.

    from sextant_core.planning.policysets import sextant_policy_set, paragon_policy_set
    from sextant_core.planning.sextant import SextantPlanner
    from sextant_core.planning.paragon import ParagonPlanner

Modules: `targets` (required performance of a target), `model` (predicted performance from the
four classification rows), `residual` (per-server residual tolerance for the exact D1 check),
`assess` (one columnar assessment of every server for a workload), `scaleout` (Quasar's scale-out
walk), `greedy` (Paragon's level-by-level search with backtracking), `sextant` and `paragon` (the
planners), `policysets` (the profiles). The column arithmetic lives in the placement plugins
`paragon_residual`, `paragon_arq`, `quasar_sizing` and `quasar_scores`.
"""
