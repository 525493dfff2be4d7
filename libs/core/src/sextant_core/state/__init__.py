"""Cluster state as a fold of the event log: `state = fold(evolve, events)` (STYLE 2)."""

from .evolve import evolve, fold
from .model import EMPTY, ClusterState, ServerState, WorkloadState

__all__ = ["EMPTY", "ClusterState", "ServerState", "WorkloadState", "evolve", "fold"]
