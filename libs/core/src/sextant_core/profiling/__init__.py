"""Profiling plans: which short runs a new workload gets."""
