"""The same floats on every machine: numpy's AVX-512 kernels are switched off in every process.

numpy picks SIMD kernels at import time from the CPU it runs on. Its AVX-512 kernels (the SVML
transcendental functions, wider reductions) round differently in the last bit from its AVX2 and
baseline kernels, so a log folded on one machine would not re-derive byte for byte on another —
found when the twin's golden log hashes (made on an AVX2 machine) differed on an AVX-512 Xeon
(`libs/sim/tests/test_twin_determinism.py`). The AVX2 (X86_V3) and baseline kernels gave
identical logs there, so only the AVX-512 targets are disabled; the cost measured on
paragon-ec2-2500 was within run-to-run noise.

`pin_numpy_simd()` sets `NPY_DISABLE_CPU_FEATURES` unless the user set it; it only has an effect
before numpy is first imported, which is why `sextant_kit/__init__.py`, the CLI's entry point,
the root `conftest.py` and the Makefile (exported for every tool it runs) call or set it first.
This module must not import numpy.
"""

from __future__ import annotations

import os
import sys

ENV = "NPY_DISABLE_CPU_FEATURES"
DISABLED = "X86_V4 AVX512_ICL AVX512_SPR"


def pin_numpy_simd() -> bool:
    """Disable numpy's AVX-512 dispatch targets for this process and its children; True when it
    takes effect here (numpy not imported yet), False when numpy was already loaded."""
    os.environ.setdefault(ENV, DISABLED)
    return "numpy" not in sys.modules
