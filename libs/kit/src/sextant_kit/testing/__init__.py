"""Test support shipped with kit: real-infrastructure pytest fixtures and Kafka probes.

- `sextant_kit.testing.fixtures` is the pytest plugin (registered by the repository's root
  `conftest.py`) providing `pg_node`, `pg_url`, `fresh_pg_url`, `kafka_node`, `kafka_bootstrap`,
  `kafka_topics` and `stack_env`, backed by the servers `sextant_infra` starts (real PostgreSQL,
  real Kafka; a start-up failure errors the tests, it never skips them).
- `sextant_kit.testing.integration_guard` fails an enforced run (`SEXTANT_ENFORCE_INTEGRATION=1`)
  when fewer tests than `tests/integration/EXPECTED.toml` demands used those servers and passed,
  or when an integration test was skipped.
- `topic_end_offsets(bootstrap, topic)` lets a Kafka test assert that broker offsets moved;
  `read_topic(bootstrap, topic)` returns every record the topic holds.
- `sextant_kit.testing.platform`: driving the running platform — `sextant(...)` (the CLI in a
  subprocess), `until(...)` (bounded polls), `platform_ps(env)`, `readyz(api)`,
  `write_stack_env(...)`, `read_log(url)` (the PostgreSQL event log).
- `load_script(path, name)`: a script outside any package (a benchmark) loaded as a module.

Importing this package does not import pytest.
"""

from .kafka_offsets import read_topic, topic_end_offsets
from .platform import platform_ps, read_log, readyz, sextant, until, write_stack_env
from .scripts import load_script

__all__ = ["load_script", "platform_ps", "read_log", "read_topic", "readyz", "sextant", "topic_end_offsets", "until", "write_stack_env"]
