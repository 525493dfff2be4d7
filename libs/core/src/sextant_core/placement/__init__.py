"""Placement: columnar filter/score plugins, one registry, profiles, and the profile planner
(STYLE 7–9; Paragon §3.2, Quasar §4). Importing this package registers the built-in plugins
and the baseline profiles.

    from sextant_core.placement import planner_for
    planner = planner_for("least-loaded")            # a Planner for PolicySet(planner=...)
    outcome = planner.place(state, workload, ctx)    # PlacementOutcome with a DecisionTrace

External plugins and profiles (the twin's `oracle`): `register_plugin` on a class with `NAME`,
`Args`, `filter`/`REASONS` and/or `score`; `register_profile(make_profile(...))`; per-decision
columns through `ProfilePlanner(..., columns=fn)`.
"""

from .framework import (
    DEFAULT_BUDGET,
    Budget,
    Evaluation,
    FilterPlugin,
    FilterVerdict,
    PluginArgs,
    Profile,
    ScorePlugin,
    Step,
    best_row,
    evaluate,
    ranked_rows,
    verdict,
)
from .planner import ColumnSource, ProfilePlanner, place_request, planner_for
from .profiles import BASELINES, get_profile, profile_names, register_profile
from .registry import filter_step, make_profile, plugin, plugin_names, register_plugin, score_step
from .request import PlacementRequest, Sizer, request_for, requested_size
from .table import CandidateTable, TableIndex, build_table, without_workload

__all__ = [
    "BASELINES", "DEFAULT_BUDGET", "Budget", "CandidateTable", "ColumnSource", "Evaluation", "FilterPlugin",
    "FilterVerdict", "PlacementRequest", "PluginArgs", "Profile", "ProfilePlanner", "ScorePlugin", "Sizer",
    "Step", "TableIndex", "best_row", "build_table", "evaluate", "filter_step", "get_profile", "make_profile",
    "place_request", "planner_for", "plugin", "plugin_names", "profile_names", "ranked_rows",
    "register_plugin", "register_profile", "request_for", "requested_size", "score_step", "verdict",
    "without_workload",
]
