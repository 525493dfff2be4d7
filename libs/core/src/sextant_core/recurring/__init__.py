"""Recurring jobs (Morpheus, `docs/recurring.md`): the skyline LP, the plan, LowCost, DRA, the ledger."""
