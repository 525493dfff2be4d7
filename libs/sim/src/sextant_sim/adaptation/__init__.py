"""Adaptation in the twin: the agent's monitoring hooks (in-place probes, the per-task view of
analytics jobs, phase-change truth), the baselines (`autoscaling`, Hadoop's speculative rule,
LATE) and detection scoring against the twin's injected truths."""
