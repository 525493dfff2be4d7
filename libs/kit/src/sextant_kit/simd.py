"""numpy's SIMD pin (`sextant_contracts.simd`), re-exported where the kit's users look for it."""

from __future__ import annotations

from sextant_contracts.simd import DISABLED, ENV, pin_numpy_simd, pinned_before_numpy

__all__ = ["DISABLED", "ENV", "pin_numpy_simd", "pinned_before_numpy"]
