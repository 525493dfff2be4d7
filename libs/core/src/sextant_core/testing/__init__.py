"""Builders for tests of the core and of everything that folds core state (no pytest import)."""
