"""Test support shipped with kit: real-infrastructure pytest fixtures and Kafka probes.

- `sextant_kit.testing.fixtures` is the pytest plugin (registered by the repository's root
  `conftest.py`) providing `pg_node`, `pg_url`, `fresh_pg_url`, `kafka_node`, `kafka_bootstrap`,
  `kafka_topics` and `stack_env`, backed by the servers `sextant_infra` starts (real PostgreSQL,
  real Kafka; a start-up failure errors the tests, it never skips them).
- `sextant_kit.testing.integration_guard` fails an enforced run (`SEXTANT_ENFORCE_INTEGRATION=1`)
  when fewer tests than `tests/integration/EXPECTED.toml` demands used those servers and passed,
  or when an integration test was skipped.
- `topic_end_offsets(bootstrap, topic)` lets a Kafka test assert that broker offsets moved.

Importing this package does not import pytest.
"""

from .kafka_offsets import topic_end_offsets

__all__ = ["topic_end_offsets"]
