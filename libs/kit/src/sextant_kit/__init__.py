"""sextant_kit."""

from .simd import pin_numpy_simd

pin_numpy_simd()  # before anything imports numpy (see simd.py)
