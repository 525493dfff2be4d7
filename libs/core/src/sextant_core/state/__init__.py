"""Cluster state as a fold of the event log: `state = fold(evolve, events)` (STYLE 2)."""

from .model import ClusterState, ServerState, WorkloadState, EMPTY
from .evolve import evolve, fold

__all__ = ["EMPTY", "ClusterState", "ServerState", "WorkloadState", "evolve", "fold"]
