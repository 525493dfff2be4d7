"""Repository-wide pytest set-up (root conftest, so it applies under tests/, libs/, services/, apps/).

- `sextant_kit.testing.fixtures`: the real PostgreSQL / Kafka fixtures (`pg_node`, `pg_url`,
  `fresh_pg_url`, `kafka_node`, `kafka_bootstrap`, `kafka_topics`, `stack_env`) and, through it,
  the "nothing skipped" integration guard (enforced when SEXTANT_ENFORCE_INTEGRATION=1).
- `pytester`: for tests of pytest plugins themselves.
"""

pytest_plugins = ["sextant_kit.testing.fixtures", "pytester"]
