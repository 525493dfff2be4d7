"""Cross-package tests (architecture, contracts, integration, replay, e2e).

The real-infrastructure fixtures and the integration guard are registered by the repository's
root `conftest.py` (a root conftest is loaded for every test path, including libs/ and
services/); see `sextant_kit.testing.fixtures` for the fixture table.
"""
