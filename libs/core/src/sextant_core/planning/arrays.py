"""Array type aliases shared by the planning modules (the placement table's own aliases)."""

from ..placement.table import BoolArray, FloatArray, IntArray

__all__ = ["BoolArray", "FloatArray", "IntArray"]
