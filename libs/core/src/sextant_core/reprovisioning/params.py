"""The knobs of monitoring and reprovisioning (docs/adaptation.md), with the choice behind each default.

Quasar §4.1 and Paragon §3.4 leave the thresholds open (quasar spec §9 item 10, paragon spec
§3.4 [GAP]); each default below is a documented [IMPL CHOICE], tested in
`libs/core/tests/reprovisioning/`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AdaptationParams:
    # --- reactive detection (Quasar §4.1, Paragon §3.4 reactive mode) ---------------------------
    # A running workload deviates when an observation is below its target (ratio < 1) or below
    # the estimate of its classification for its current allocation by more than
    # `estimate_margin` (relative). The detection window is one telemetry period: the first
    # observation after a change either shows it or the change is missed.
    estimate_margin: float = 0.15
    # [IMPL CHOICE] the step detector (`detection.step_change`): each workload's own
    # measured baseline — its first observation whose window lies wholly after its latest
    # (re)classification, placement or adjustment and after the latest *noisy* window — and a
    # relative step of a later observation beyond `step_threshold` means the workload itself
    # changed: it is reclassified at once (not subject to `reclassify_gap_s`: the reclassification
    # re-baselines it, so one step cannot fire twice).
    # `step_threshold`: from the telemetry noise, 1 % sd per window (docs/twin.md), 1.4 % on a
    # ratio of two windows: 5 % is 3.5 sd, and half the smallest phase change of the issue (10 %).
    step_threshold: float = 0.05
    # [IMPL CHOICE] the telemetry's noise as the operator measured it — `telemetry_sd` (relative) for
    # a window of `telemetry_sd_window_s`, shrinking as 1/√length (the twin: 1 % per window of the
    # scenario's period, `agent.window_noise_factor` — 300 s in paragon-local-phases, where this
    # matters; with longer periods the 5 % floor governs, with shorter ones the bar is cautious) —
    # and the step must exceed `step_z` standard deviations of the
    # difference of the baseline (the mean of its clean windows) and the latest window. None: the
    # plain `step_threshold` against the first clean window.
    telemetry_sd: float | None = 0.01
    telemetry_sd_window_s: float = 300.0
    step_z: float = 3.0
    # [IMPL CHOICE] the ladder sizes no adjustment on a window shorter than this (a window split at a
    # neighbour's change can be seconds long, √(300 / length) × 1 % noisy in the twin)
    ladder_min_window_s: float = 30.0
    # [IMPL CHOICE] a neighbour change re-baselines only if the workload's measured level moved
    # across it by more than `neighbour_effect_z` standard deviations (None: always). Off: on
    # paragon-local-phases seed 1, 1.5 / 2.5 sd lifted reactive detection 0.77 → 0.82 / 0.86 with
    # 4–5× the false claims (a neighbour's own phase change moves a workload under an unchanged
    # estimated pressure; docs/adaptation.md).
    neighbour_effect_z: float | None = None
    # `neighbour_gate` (points, 0..100 per source): a window is noisy when the pressure around the
    # workload (Σ caused of its servers' residents, as their classifications estimate it) moved by
    # more than this on some source — a neighbour arrived, left or was reclassified. None: every
    # change of its servers' residents re-baselines. Swept on paragon-local-phases seed 1 (twin
    # v3; docs/adaptation.md): None 0.45 detection / 0.088 reactive false positives, 5 → 0.39 /
    # 0.015, 10 → 0.46 / 0.047, 15 → 0.53 / 0.072, 20 → 0.60 / 0.118, 30 → 0.75 / 0.227; then on
    # seeds 1–5: 15 exceeded 8 % on seeds 2 and 3 (0.114, 0.094); 12.5 was the largest gate
    # that kept every seed at or below 8 % (0.056–0.074; detection 0.47–0.52, mean 0.49).
    # Now 0: with single-node telemetry every 60 s, split at resident changes (paragon-local-phases,
    # docs/twin.md "The world"), a segment of constant neighbours holds several windows, so
    # re-baselining on every move of the pressure costs little detection and no longer lets a
    # neighbour's effect pass as a step: seed 1 at 60 s windows, gate 0 → 0.77 detection with 47
    # false claims in 8037 observations; gate 12.5 → 0.92 with 480 false claims in 9082 (0.053 per
    # observation, within 8 % only because the windows are 5× as many — not taken).
    neighbour_gate: float | None = 0.0
    # [IMPL CHOICE] ladder 8.6: with a gate, a pressure move counts (makes the window noisy) only
    # on a source where the pressure before or after it comes within this many points of the
    # workload's tolerated score (its classification: where it starts to slow); None (≤ 8.5):
    # every move counts (docs/adaptation/phases.md).
    neighbour_tolerated_margin: float | None = 30.0
    # the kinds the step detector watches: those whose telemetry is a rate (single-node batch).
    # An analytics job reports a projected completion time, which moves with its progress and
    # with its stragglers (the straggler rule's business, Quasar §4.3): with analytics watched
    # too, quasar-hadoop-stragglers seed 1 completed 50 of 60 jobs instead of 58.
    step_kinds: tuple[str, ...] = ("batch",)
    # The estimate rule (below the classification's estimate by `estimate_margin`) as a second
    # reclassification trigger (a mis-classification, Paragon §3.6), within `reclassify_gap_s`.
    # Off by default since the step detector: on seed 1 it added 0.06 detection and 0.05 reactive
    # false positives (0.53 / 0.072 → 0.59 / 0.119), above the 8 %.
    estimate_reclassify: bool = False
    # --- proactive detection (Quasar §4.1: 20 % of active workloads every 10 minutes) ------------
    probe_fraction: float = 0.2
    probe_period_s: float = 600.0
    probe_sources: int = 2  # two microbenchmarks (Paragon §3.4 in vivo; Quasar §4.3)
    # A "significant change" (Quasar §4.1 [GAP]): on some probed source the score moved by more
    # than `probe_change` relative to the recorded value AND by more than `probe_floor` points
    # (the absolute floor keeps Table III-sized noise on low scores from counting as a relative
    # change).
    # Chosen on paragon-local-phases seed 1 (docs/adaptation.md): the probe re-measures the sources
    # its profiling measured and compares with those measurements; caused scores are left out
    # (their Table III noise, sd ≈ 9 points below 30, exceeds the typical caused score), and the
    # thresholds keep the false positives of unchanged workloads near the papers' 8 %.
    probe_change: float = 0.3
    probe_floor: float = 18.0
    probe_scores: tuple[str, ...] = ("tolerated",)
    # [IMPL CHOICE] ladder 8.6 (docs/adaptation/phases.md). `probe_policy` "rotation" (≤ 8.5): the
    # 20 % rotation above, `probe_sources` sources its profiling measured, verdict
    # `probe_test` "largest" (`detection.probe_change` against the profiling measurements — on the
    # profiling platform, not the probed server's). "baseline" (8.6): every running batch workload
    # is probed in place right after each reset (its first observation after a (re)classification
    # or allocation change: the *in-place baseline*, same server, same sources), then once every
    # `probe_interval_s` (at the probe rounds), on the `baseline_sources` sources its classification
    # is most sensitive to (lowest tolerated: a phase that scales a demand moves the tolerance of
    # every source loaded on it, so several sources move at once); verdict "combined"
    # (`detection.combined_change`): the mean change of the tolerated scores over the probed
    # sources against the in-place baseline's mean, in units of the operator's score noise
    # `probe_sd` (Paragon Table III: ~7 points), beyond `probe_z` standard deviations either way
    # (phase 2 lowers the tolerance, phase 3 restores it). A flagged probe reclassifies at once
    # (the reclassification resets the baseline, which spaces them like the reactive step).
    # Cost: `probe_source_s` of server time per ramped source (PROBE_S = 10 s for two).
    probe_policy: str = "baseline"
    probe_test: str = "combined"
    probe_interval_s: float = 600.0
    baseline_sources: int = 4
    # [IMPL CHOICE] the operator's prior on what a phase moves (Paragon §5's phases are memory
    # load: medium → high → medium): probe these sources; None: the `baseline_sources` most
    # sensitive ones of the classification (`detection.sensitive_sources`). Measured on
    # paragon-local-phases seed 1 (docs/adaptation/phases.md): the most sensitive sources moved by
    # -0.7 points on average across a change (sd 4.0, as across no change).
    probe_prior: tuple[str, ...] | None = ("memory_cap", "memory_bw", "llc_cap", "llc_bw")
    probe_sd: float = 7.0
    probe_z: float = 2.5
    probe_source_s: float = 5.0
    # --- reclassification spacing (a workload that cannot meet its target is not re-profiled on
    # every observation): at most one reclassification per `reclassify_gap_s` --------------------
    reclassify_gap_s: float = 1200.0
    # --- the ladder (Quasar §4.1) ---------------------------------------------------------------
    # [IMPL CHOICE] batch and analytics: the ladder does not adjust a workload again within
    # `adjust_gap_s` of its latest allocation change (placement, adjustment, migration) — one
    # telemetry period of paragon-local-phases, so the previous change is measured first. Needed
    # once single-node telemetry is finer than the period (docs/twin.md, "The world"): with
    # 60 s windows and no gap, the migrate rung ran on every window and migrations went from 88 to
    # 156 on seed 1 (each loses the footprint's copy time).
    adjust_gap_s: float = 300.0
    # services: utilisation u = offered load / estimated capacity of the allocation
    # (u is against the classification's capacity estimate — max QPS within the bound — which
    # is conservative in the twin; the measured p99 is the second signal)
    # Tuned on quasar-memcached-diurnal seeds 1–3 once guarded services stopped taking best effort
    # back (docs/adaptation.md lists the settings tried: 0.7/0.85 → 0.8/0.92 cost 0.2 points of
    # requests within the bound, 99.86 → 99.65 %, for 7 % fewer server-hours, 223 → 208).
    # These are the reactive rules (no forecast yet); with a forecast, the `forecast_*` ones.
    scale_up_utilisation: float = 1.05  # u above → add capacity (in place first)
    scale_down_utilisation: float = 0.8  # u below (QoS met, p99 cool) → reclaim (Quasar: idle resources)
    target_utilisation: float = 0.92  # size adjustments (and what a reclaim keeps) so that u lands here
    hot_latency: float = 0.95  # p99 above this share of the bound → add capacity before it is missed
    cool_latency: float = 0.7  # reclaim only while p99 is below this share of the bound
    # (ladder 8.11: 0.85, the forecast's, in a service's first hour too — before the forecast and the
    # latency fit apply. Measured need: quasar-memcached-diurnal seed 5 (sextant 9, ladder 8.10) held
    # the 15 nodes placed for its peak through the first hour at utilisation 0.43–0.49, its p99 at
    # 0.74–0.84 of the bound (mostly base latency), where 5 would do: 13 server-hours of its 32 above
    # the per-hour reference)
    min_nodes: int = 1
    # [IMPL CHOICE] services: size growth and reclaim on a short-horizon forecast of the service's
    # own offered load (`reprovisioning.forecast`: seasonal-naive once a day of history exists,
    # else a local linear trend; upper = point + `forecast_z` × its recent RMS error) instead of
    # the last window alone: the load that counts is max(now, upper forecast `forecast_horizon_s`
    # ahead), so capacity is added before a ramp and reclaimed right after a peak. Used once the
    # history spans `forecast_min_history_s` (a trend fitted on less is noise); None: off.
    forecast_horizon_s: float | None = 600.0
    forecast_window_s: float = 3600.0
    forecast_z: float = 1.0
    forecast_min_margin: float = 0.0
    forecast_min_history_s: float = 3600.0
    # With a forecast the service runs hotter: growth comes ahead of the load, and the
    # classification's capacity estimate is conservative in the twin, so u lands above 1 and the
    # measured p99 is the guard; no hysteresis band on reclaim (the forecast already says the
    # load is not coming back within the horizon). Tuned on quasar-memcached-diurnal seeds 1–5
    # (docs/adaptation/diurnal.md lists the settings tried): the reactive rules above gave 189.1 /
    # 214.9 server-hours on seeds 1 / 2 (1.30 / 1.15 × the floor), 0.9993 / 0.9952 of requests
    # within the bound; these 170.9 / 208.8 (1.18 / 1.11 ×), 0.9976 / 0.9934. Hotter (u 1.2, p99
    # guard at the bound) served 0.984 on seed 4, below Quasar's 0.988.
    # [IMPL CHOICE] services: a QoS miss at a load the current allocation has already served
    # with its QoS met (the largest offered load among its recent observations with ratio ≥ 1,
    # since its latest allocation change) is not a lack of capacity, whatever the model estimates:
    # the neighbours changed, so evicting best-effort co-runners comes first (the interference
    # rung, otherwise tried only when the model sees spare capacity). Measured need:
    # quasar-memcached-diurnal seed 10 — a best-effort filler next to memcached put its p99 at
    # 10× the bound at a load its 20 nodes had served at 0.94 of the bound; the model's
    # conservative estimate (u 1.33) skipped the eviction, and the ladder grew and migrated for
    # 8.7 hours (0.951 of requests within the bound, 1.86 × the floor). Off before ladder 8.3.
    demonstrated_capacity: bool = True
    # [IMPL CHOICE] services: the model-free growth (`Adaptive._grow_blind`) counts its growth in
    # nodes — one more node (twice the nodes below half the target) of the largest size that
    # fits — not in cores: when it must reshape to a smaller size, each node counts for
    # S(current size) / S(smaller size) of the classification's scale-up curve, as one when that is
    # within `blind_growth_size_tolerance` (the curve's noise on a plateau), and server-hours count
    # servers. Measured need: quasar-memcached-diurnal seed 5 — a 0.04 % miss reshaped 8 nodes of
    # 16 cores into 18 of 8 (12.5 % more cores on 2.25 × the servers; its estimated scale-up is
    # 1.02 × from 8 to 16 cores, flat in the twin), kept 9 hours. Off before ladder 8.5.
    blind_growth_in_nodes: bool = True
    blind_growth_size_tolerance: float = 0.05
    # [IMPL CHOICE] services: the capacity estimate calibrated on the service's own latency
    # telemetry (`reprovisioning.calibration`: the weakest node's M/M/1 tail fitted to its latest
    # `calibration_points` (load, p99) points). With a fit, utilisation is against the calibrated
    # capacity (u = 1: `calibrated_share` of requests within the bound, the nodes' shares averaged
    # as the requests are split) and the `calibrated_*`
    # thresholds apply instead of the forecast's (the p99 guard on reclaim is the fit's
    # prediction, no longer the `cool` band); growth and reclaim are sized on it. Measured need:
    # quasar-memcached-diurnal seed 3 — the estimate was 26 % optimistic on 16 nodes of 8 cores
    # and 2 % conservative on 6 (each node needs a fixed headroom below its capacity), while the
    # p99 guard kept 16 nodes for 9 hours. Off before ladder 8.7.
    latency_calibration: bool = False
    calibration_points: int = 24
    calibration_min_points: int = 6
    # a fit whose capacity for the current allocation is off the classification's by more than this
    # factor either way is not used (the knee not identifiable from the points: a flat p99 fits a
    # base near it and any capacity); that decision follows the forecast's rules
    calibration_max_factor: float = 1.3
    # [IMPL CHOICE] ladder 8.9: a fit above `calibration_max_factor` × the estimate is used where
    # the service has shown more than the estimate on the same servers: an allocation's capacity
    # is the fit's, at most `calibration_max_factor` × the largest of its estimate and its nodes ×
    # the load per node carried with the p99 (the slowest node's) at most this share of the bound
    # by an allocation holding every one of its servers with no more cores. A conservative estimate
    # is corrected upward as far as shown, a step beyond; a flat p99 near the bound shows nothing.
    # None: off (8.8 and before). Measured need: quasar-memcached-diurnal seed 10, where the guard
    # discarded a fit 1.5–2.3 × the estimate (the truth 1.56–1.72 ×) at every decision; the tuning
    # seeds (not 6–10) in docs/adaptation/diurnal.md, "Ladder 8.9".
    calibration_demonstrated_latency: float | None = None
    # [IMPL CHOICE] ladder 8.11, services: a reclaim gives back at most this share of the nodes in
    # one decision (at least one; None: any number, ≤ 8.10) — a capacity estimate or fit that is
    # wrong cannot halve a service at once (on planner 8, quasar-memcached-diurnal seed 5 went from
    # 13 nodes to 5 in one calibrated reclaim; seed 1 halved twice). 0.5, not 0.25: on seed 3 (sextant
    # 9) a quarter kept 13 of 16 nodes after the first window instead of 8, +5 server-hours
    # (docs/adaptation/diurnal.md, "Ladder 8.11").
    reclaim_max_share: float | None = None
    # [IMPL CHOICE] ladder 8.15, services: where a reclaim can drop no node whole (the rest would
    # be short of the load ahead), it consolidates — the j weakest nodes (by the classification's
    # node estimate, j ≤ this + 1) onto j − 1 of the strongest free servers that pass the
    # interference check, when the result still holds the load ahead at the target utilisation: one
    # node fewer, on stronger servers. None: off (≤ 8.14). Measured need: quasar-memcached-diurnal
    # seeds 1–5 (sextant 9, ladder 8.14): server choice cost 27.8 of 1 010.6 server-hours
    # (the rule acted on no tuning seed: docs/adaptation/diurnal.md, "Ladder 8.15").
    consolidate_max_moves: int | None = None
    calibrated_share: float = 0.99  # the capacity is the load at which this share of requests meets the bound
    calibrated_scale_up_utilisation: float = 1.0
    calibrated_target_utilisation: float = 0.97
    calibrated_scale_down_utilisation: float = 0.92
    forecast_scale_up_utilisation: float = 1.15
    forecast_scale_down_utilisation: float = 1.1
    forecast_target_utilisation: float = 1.1
    forecast_hot_latency: float = 0.95
    forecast_cool_latency: float = 0.85
    # [IMPL CHOICE] which kinds the ladder scales out. Analytics jobs are not grown by whole nodes
    # mid-run: a node brings the job's whole per-node footprint to a new server, and where
    # footprints are under-stated that OOM-kills co-runners (measured on quasar-hadoop-stragglers,
    # seed 1: 9 of 60 jobs failed with analytics scale-out on, 0 without; docs/adaptation.md).
    scale_out_kinds: tuple[str, ...] = ("service",)
    max_nodes: int = 64
    # migration cost model: a live copy of the footprint plus a fixed pause; stateful services
    # move microshards (64 MB, "a few msec" each, Quasar §5) — only a fraction of their load
    migration_bandwidth_gbs: float = 1.0
    migration_fixed_s: float = 2.0
    microshard_gb: float = 0.064
    microshard_s: float = 0.005
    # the gain must repay the cost: predicted gain (performance-seconds over the remaining time)
    # ≥ `repay_factor` × cost (performance-seconds lost while moving)
    repay_factor: float = 2.0
    # [IMPL CHOICE] ladder 8.10: the re-plan that follows a reclassification (`Adaptive.replan`)
    # keeps the workload where it runs unless the planner's proposal is predicted better by at
    # least `replan_min_gain` (relative, on the new classification's estimate of platform and
    # cores) and the gain repays the move (`ladder.repays`); a proposal on the same servers is
    # taken only when it grows the allocation, and no proposal (no room) keeps it running where it
    # is. None (≤ 8.8): the planner's proposal is taken as it is. Measured need: on
    # paragon-local-phases seed 1 (8.8), 17 workloads met their QoS without adaptation and not
    # with it; 14 of them had been re-planned onto other servers after a reclassification (mostly
    # slower platforms: the planner takes a server that meets the re-classified target), 1 onto
    # fewer cores, 7 also migrated by the ladder (docs/adaptation/phases.md, "Ladder 8.10").
    replan_min_gain: float | None = None
    # [IMPL CHOICE] ladder 8.10, batch workloads (`step_kinds`): the migrate rung moves only for a
    # predicted gain of at least `migrate_min_gain` (relative; 0: any gain that repays, ≤ 8.8),
    # and the in-place scale-up grows only for a predicted gain of at least `scale_up_min_gain`
    # (relative; ≤ 8.8: 1 %). The estimates are the classification's, whose error between
    # platforms and core counts is larger than 1 %: measured need on paragon-local-phases seed 1
    # (after the re-plan rule) — a migrate at ratio 0.90 vs estimate 0.89 moved a workload off the
    # best platform (0.997 → 0.764 of its ideal); in-place scale-ups of single-threaded workloads
    # to 4–7 cores held the cores arrivals waited for.
    migrate_min_gain: float = 0.0
    scale_up_min_gain: float = 0.01
    # [IMPL CHOICE] ladder 8.13, batch workloads (`step_kinds`): moved to other servers (the re-plan
    # after a reclassification, the migrate rung) only while the latest observation where they run
    # is below `batch_move_below` × the classification's estimate for it (`Adaptive._measured_factor`:
    # a neighbour the estimate leaves out); otherwise kept, grown in place only. The migrate rung
    # runs only within `estimate_margin` of the estimate (≥ 0.85 of it), so at 0.8 it no longer
    # moves batch workloads. None (≤ 8.10): no such condition. Measured need on
    # paragon-local-phases seeds 1–5 (8.10, paired with no-adaptation, `bench/phases_diagnosis.py`):
    # of the 39 workloads that met their QoS without adaptation and not with it, 24 had been
    # re-planned onto other servers after a reclassification (4 of the 34 the other way), mostly
    # onto slower platforms (time-averaged platform factor 0.65–0.93 against 1.0), 5 migrated (1).
    # Tuned on seeds 1–5: never (0) / 0.8 → QoS met 0.132 / 0.135 against no-adaptation's 0.126,
    # below it on 1 / 0 seeds (docs/adaptation/phases.md, "Ladder 8.13").
    batch_move_below: float | None = None
    # [IMPL CHOICE] a co-resident's reclassification (its request) restarts the step detector's
    # baseline, as a change of the estimated pressure does: most false reactive claims follow a
    # neighbour's own phase change (8.10, seed 1: 35 of 44 within 420 s), and its reclassification
    # is the policy's sign of that change. Tried for 8.13 on seeds 1–5 (with `batch_move_below`
    # 0.8): reactive false-claim share worst 0.227 → 0.128, reactive detection mean 0.75 → 0.67,
    # QoS met 0.135 → 0.127 (below no-adaptation on 2 seeds of 5). Off in every ladder (not taken:
    # the QoS bar first); kept for the next ladder's trade-off.
    neighbour_reclass_reset: bool = False
    # [IMPL CHOICE] ladder 8.16: a step of the workload's telemetry is not claimed when a
    # co-resident of the step kinds (same servers) moved the same way across the start of the
    # step's window by at least `step_attribution` × the step (its own telemetry since its own
    # latest allocation change, `detection.shift_across`): the neighbour changed phase and this
    # workload felt it (a neighbour's phase moves the pressure this workload feels while the
    # estimated pressure stays unchanged: most false claims, docs/adaptation/phases.md). 1.0: the
    # one that moved more is taken to be the one that changed. With it on, no second claim is
    # made while one is pending (requested, not yet classified: such a claim is false by the
    # study's rule). None: off (≤ 8.14). A co-resident's reclassification request since the
    # window's start as a second veto was tried (seeds 1–2, without `split_reports`: reactive
    # detection 0.83 / 0.78 → 0.76 / 0.72) and is not in the rule.
    # `attribution_wait`: a step is judged only once every such co-resident has reported at or
    # after the step window's end (their windows that hold a change of their own before it have
    # closed), else at the workload's next observation, the held window tested as it was.
    # Measured need and tuning (paragon-local-phases seeds 1–5, 8.14 → 8.16: reactive detection
    # 0.748 → 0.863, reactive false-claim share 0.135 → 0.114, worst seed 0.227 → 0.147, QoS met
    # 0.135 → 0.142): docs/adaptation/phases.md, "Ladder 8.16".
    step_attribution: float | None = None
    attribution_wait: bool = False
    # [IMPL CHOICE] ladder 8.16, with `neighbour_gate` None: the node agent closes its residents'
    # telemetry windows at a resident change (a split report, docs/twin.md), so a window that ends
    # at the change ran wholly before it. The policy folds the newcomer's placement before those
    # reports, so ≤ 8.14 took the change for one inside the window and dropped it (on
    # paragon-local-phases a resident changes every one or two windows: the window showing a
    # phase change was often the one dropped). With this on, a change at the latest observation's
    # time is not a reset for it; the change before it is where the recorded pressure moved.
    split_reports: bool = False
    # [IMPL CHOICE] ladder 8.11, services: the in-place scale-up (more cores a node) grows only for
    # a predicted gain of at least this (relative; ≤ 8.10: 1 %); below it the ladder goes on to
    # evict and scale out. Measured need: quasar-memcached-diurnal seed 2 (sextant 9, ladder 8.10)
    # grew 8-core nodes to 24 cores in place 15 times for a predicted gain of 0–1.4 % (memcached's
    # scale-up is flat beyond 8 cores), each followed by a missed window and a scale-out.
    service_scale_up_min_gain: float = 0.01
    # --- stragglers (Quasar §4.3) ---------------------------------------------------------------
    straggler_slowdown: float = 1.5  # a task ≥ 50 % slower than the median
    # [IMPL CHOICE] compare task rates relative to what the classification expects of each node's
    # platform and cores, so that a node of a slower platform is not taken for a straggler
    straggler_normalise: bool = True
    straggler_change: float = 0.2  # in-place interference change > 20 % → relaunch elsewhere
    # [IMPL CHOICE] which rule picks the nodes to probe (`stragglers.py`): "rate" (ladder ≤ 8.3) —
    # a task's work rate ≥ `straggler_slowdown` × below the median; "progress" (8.4) — a node
    # effect (≥ `straggler_slowdown` × slower than the job's other nodes, or, alone, the job's own
    # rate fallen ≥ that much over its latest window with its projection at most
    # `straggler_drop` × the previous one) that puts one of its tasks' progress rate below
    # `straggler_half` × the job's median, and without which it would not be (the twin's
    # definition of a true straggler, docs/adaptation/stragglers.md). Chosen on
    # quasar-hadoop-stragglers-v2 seeds 1–5: the "rate" rule probed only multi-node jobs (a node
    # alone has no peers; 3 of 4 true stragglers ran on one node) and flagged slow nodes whose
    # tasks were not stragglers. `straggler_drop` 0.8: healthy single-node windows fell ≤ 0.8 ×
    # in 2 of 716, injected ones in all 36 (at most 0.71). "views" (8.8, `task_views.py`): the
    # node's fall between the job's two latest task views, each task's progress rate from its own
    # progress and age (docs/adaptation/stragglers.md; chosen on seeds 1–5 and 11–20).
    straggler_rule: str = "views"
    straggler_half: float = 0.5
    straggler_drop: float = 0.9
    straggler_first_window: bool = True
    # [IMPL CHOICE] ladder 8.8 ("views", `task_views`): a node's median work rate falling this
    # much between two consecutive task views is a new node effect (the view's noise is 1 % a task)
    straggler_window_fall: float = 1.2
    # [IMPL CHOICE] 8.8: a straggler probe with no healthy node of the job beside it (compared with
    # the job's own profiling) relaunches only when a second probe agrees (evidence accumulated:
    # each probe is a fresh, noisy measurement); with a reference node one probe decides
    straggler_confirm_alone: bool = True
    # [IMPL CHOICE] 8.8: with a reference node, a probed source with room to fall that does not
    # fall (`detection.straggler_contradicted`) vetoes the relaunch
    straggler_every_source: bool = True
    # [IMPL CHOICE] ladder 8.12 (`task_views.straggling_nodes`): a node effect makes a task
    # straggle when ANY task of the node is below `straggler_half` × the job's median progress rate
    # and would not be without it (the truth's test); ≤ 8.10 tested only the node's slowest task,
    # which on seeds 1–5 was an intrinsic straggler (slow anywhere) on 17 of the 18 missed nodes
    # (docs/adaptation/stragglers.md, "Ladder 8.12")
    straggler_any_task: bool = False
    # [IMPL CHOICE] ladder 8.12: with a reference node, a probe that `straggler_change` does not
    # flag still confirms the node when its scores are at least this many nats more likely under
    # the slowdown its task view measured than under none (`detection.straggler_likelihood`, noise
    # `probe_sd`), unless a source contradicts it (`straggler_every_source`); None: off (≤ 8.10)
    straggler_likelihood_nats: float | None = None
