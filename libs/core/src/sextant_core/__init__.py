"""sextant_core — the pure decision core: state = fold(evolve, events); decide(state, command, ...).

Imports only the standard library, numpy/scipy/scikit-learn, immutables and sextant_contracts;
never a clock, the environment, a random module, uuid or any I/O library (tests/architecture).
"""

import sextant_contracts  # noqa: F401  (first: pins numpy's SIMD kernels, sextant_contracts/simd.py)
