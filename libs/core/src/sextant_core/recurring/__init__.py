"""Recurring jobs (Morpheus): the skyline LP, the plan, LowCost, DRA, the capacity ledger
(`docs/recurring-plan.md`)."""
