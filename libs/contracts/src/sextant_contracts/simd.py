"""The same floats on every machine: numpy's AVX-512 kernels are switched off in every process.

numpy picks SIMD kernels at import time from the CPU it runs on. Its AVX-512 kernels (the SVML
transcendental functions, wider reductions) round differently in the last bit from its AVX2 and
baseline kernels, so a log folded on one machine would not re-derive byte for byte on another —
found when the twin's golden log hashes (made on an AVX2 machine) differed on an AVX-512 Xeon
(`libs/sim/tests/test_twin_determinism.py`). The AVX2 (X86_V3) and baseline kernels gave
identical logs there, so only the AVX-512 targets are disabled; the cost measured on
paragon-ec2-2500 was within run-to-run noise.

OpenBLAS (inside numpy and scipy) also picks its kernels from the CPU: on an AVX2 EPYC it runs its
Haswell kernel, on an AVX-512 Xeon its SkylakeX one, and their matrix products differ in the last
bit — the twin's latent-factor ground truth and the classification engine's models with them, so
the golden logs made on one did not match the other (found on an AMD EPYC against hashes made on
an AVX-512 machine; forcing OpenBLAS's Prescott kernel here changed them again). On x86-64 the
pin therefore also sets `OPENBLAS_CORETYPE=Haswell` (AVX2 + FMA: every x86-64 server CPU since
2013 runs it; a CPU without AVX2 must set another kernel and accept other floats). Logs written
before this pin are replayed up to last-bit differences (`sextant_core.replay`).

`pin_numpy_simd()` sets `NPY_DISABLE_CPU_FEATURES` and `OPENBLAS_CORETYPE` unless the user set them; it only has an effect
before numpy is first imported. It lives here, in the package every other one imports and that
never imports numpy: `sextant_contracts/__init__.py` calls it, and the `__init__.py` of every
package that computes with numpy (core, sim, kit, the services, the CLI, the agent) imports
`sextant_contracts` first, so any entry point — `sextant` (sim, replay, up), a service's `main`,
the cluster agent — is pinned before numpy loads. Bench scripts, which import numpy themselves,
import `sextant_contracts` before it; the Makefile exports the variable for every tool it runs.
`tests/architecture/test_simd_pin.py` checks all of it. This module must not import numpy.
"""

from __future__ import annotations

import os
import platform
import sys

ENV = "NPY_DISABLE_CPU_FEATURES"
DISABLED = "X86_V4 AVX512_ICL AVX512_SPR"
BLAS_ENV = "OPENBLAS_CORETYPE"
BLAS_KERNEL = "Haswell"  # on x86-64 only (see above)

_first: bool | None = None  # whether numpy was still unloaded when the pin first ran here


def pin_numpy_simd() -> bool:
    """Disable numpy's AVX-512 dispatch targets and pin OpenBLAS's kernel for this process and its
    children; True when it
    takes effect here (numpy not imported yet), False when numpy was already loaded."""
    global _first
    os.environ.setdefault(ENV, DISABLED)
    if platform.machine().lower() in ("x86_64", "amd64"):
        os.environ.setdefault(BLAS_ENV, BLAS_KERNEL)
    took = "numpy" not in sys.modules
    if _first is None:
        _first = took
    return took


def pinned_before_numpy() -> bool:
    """True when the first pin of this process ran before numpy was imported (so numpy's kernels
    follow `NPY_DISABLE_CPU_FEATURES`); False if numpy came first or nothing pinned yet."""
    return bool(_first)
