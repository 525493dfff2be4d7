"""Repository-wide pytest set-up (root conftest, so it applies under tests/, libs/, services/, apps/).

- `sextant_kit.testing.fixtures`: the real PostgreSQL / Kafka fixtures (`pg_node`, `pg_url`,
  `fresh_pg_url`, `kafka_node`, `kafka_bootstrap`, `kafka_topics`, `stack_env`) and, through it,
  the "nothing skipped" integration guard (enforced when SEXTANT_ENFORCE_INTEGRATION=1).
- `pytester`: for tests of pytest plugins themselves.
"""

import sextant_kit  # noqa: F401  (pins numpy's SIMD kernels before anything imports numpy: sextant_kit/simd.py)

pytest_plugins = ["sextant_kit.testing.fixtures", "pytester"]
