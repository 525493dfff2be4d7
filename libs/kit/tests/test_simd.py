"""numpy's AVX-512 kernels are pinned off before numpy loads (sextant_kit/simd.py)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

from sextant_contracts.simd import BLAS_ENV, BLAS_KERNEL
from sextant_kit.simd import DISABLED, ENV


def _run(code: str, **env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k not in (ENV, BLAS_ENV)}
    out = subprocess.run([sys.executable, "-c", code], env={**base, **env}, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def test_importing_the_kit_pins_the_kernels_before_numpy_loads() -> None:
    code = ("import os, sys; import sextant_kit; loaded = 'numpy' in sys.modules; import numpy; "
            f"print(loaded, os.environ['{ENV}'])")
    assert _run(code) == f"False {DISABLED}"


def test_the_cli_entry_point_pins_them_too() -> None:
    code = f"import os, sys; import sextant_cli.main; print('numpy' in sys.modules, os.environ['{ENV}'])"
    assert _run(code) == f"False {DISABLED}"


def test_a_users_own_setting_is_kept() -> None:
    code = f"import os; import sextant_kit; print(os.environ['{ENV}'])"
    assert _run(code, **{ENV: "AVX512_SPR"}) == "AVX512_SPR"


def test_this_test_process_runs_with_the_pin() -> None:
    assert os.environ.get(ENV) == DISABLED  # the root conftest sets it before numpy loads


X86 = platform.machine().lower() in ("x86_64", "amd64")


def test_openblas_runs_the_pinned_kernel_whatever_the_cpu() -> None:
    code = ("import sextant_kit, numpy, threadpoolctl; "
            "print(sorted({i.get('architecture') for i in threadpoolctl.threadpool_info() "
            "if i['internal_api'] == 'openblas'}))")
    if not X86:  # pinned on x86-64 only (sextant_contracts/simd.py)
        assert _run(f"import os, sextant_kit; print(os.environ.get('{BLAS_ENV}'))") == "None"
        return
    assert _run(code) == str([BLAS_KERNEL])
    # the probe can fail: another kernel set by the user is kept (OpenBLAS reports Prescott as Katmai)
    assert _run(code, **{BLAS_ENV: "Prescott"}) == str(["Katmai"])
