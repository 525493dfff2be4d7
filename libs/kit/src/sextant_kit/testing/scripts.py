"""Loading a script that is not part of a package (the benchmarks under `bench/`) as a module."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(path: Path, name: str) -> ModuleType:
    """`path` executed as module `name`, registered in `sys.modules` (dataclasses and pickling look
    their module up there). The script's folder is on `sys.path` while it loads, so it may import
    its siblings (`bench/*.py` import `quality.py`)."""
    folder = str(path.parent)
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None, path
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(folder)
