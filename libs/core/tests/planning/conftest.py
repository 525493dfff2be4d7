"""Builders for planning tests: the shared decision-test world of `sextant_core.testing.world` (clusters folded
from real events, workloads with any target, kind, classification rows and reference platform)."""

from sextant_core.testing.world import IPS, SOURCES, World, chosen, ctx, place, policy, row10, table_of, vec

__all__ = ['IPS', 'SOURCES', 'World', 'chosen', 'ctx', 'place', 'policy', 'row10', 'table_of', 'vec']
