"""`copy_with` for the state's records (`sextant_core.records`, where it lives so that the
classification fold can use it without importing `state`)."""

from ..records import copy_with

__all__ = ["copy_with"]
