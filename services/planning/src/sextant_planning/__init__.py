"""sextant_planning."""

import sextant_contracts  # noqa: F401  (first: pins numpy's SIMD kernels, sextant_contracts/simd.py)
