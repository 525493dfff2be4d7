"""Repository-wide pytest set-up (root conftest, so it applies under tests/, libs/, services/, apps/).

- `sextant_kit.testing.fixtures`: the real PostgreSQL / Kafka fixtures (`pg_node`, `pg_url`,
  `fresh_pg_url`, `kafka_node`, `kafka_bootstrap`, `kafka_topics`, `stack_env`) and, through it,
  the "nothing skipped" integration guard (enforced when SEXTANT_ENFORCE_INTEGRATION=1).
- `pytester`: for tests of pytest plugins themselves.
"""

import os

os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")  # sextant_kit/simd.py

pytest_plugins = ["sextant_kit.testing.fixtures", "pytester"]
