"""Domain rules that are not policies: the workload state machine."""
