"""The topic registry: which Kafka topic carries which message, how many partitions it has.

Event topics are keyed by stream id (per-workload order) and never compacted. Commands for the
cluster agent travel on their own topic; the public front door is `sextant.submissions` in and
`sextant.decisions` out (docs/api/README.md); every consumer's poison messages go to `sextant.dlq` with the
reason in a header.
"""

from __future__ import annotations

from dataclasses import dataclass

from .events import EVENT_TYPES


@dataclass(frozen=True, slots=True)
class Topic:
    name: str
    partitions: int
    purpose: str
    retention_ms: int = -1  # keep history (DESIGN §4)


WORKLOAD_EVENTS = Topic("sextant.events.workloads", 6, "every event of workload streams")
SERVER_EVENTS = Topic("sextant.events.servers", 1, "server lifecycle")
CLOCK_EVENTS = Topic("sextant.events.clock", 1, "Tick events")
MODEL_EVENTS = Topic("sextant.events.models", 1, "ModelRetrained")
RECURRING_EVENTS = Topic("sextant.events.recurring", 1, "recurring templates: runs, contracts, reservations")
TENANT_EVENTS = Topic("sextant.events.tenants", 1, "virtual clusters: capacities set, allocations decided")
QUARANTINE_EVENTS = Topic("sextant.events.quarantine", 1, "RecordQuarantined of records naming no workload")
AGENT_COMMANDS = Topic("sextant.commands.agent", 3, "commands executed by the cluster agent")
SUBMISSIONS = Topic("sextant.submissions", 3, "public: SubmitWorkload from integrations")
DECISIONS = Topic("sextant.decisions", 3, "public: outcomes integrations can follow")
DEAD_LETTERS = Topic("sextant.dlq", 1, "messages a consumer could not process, with the reason")
TELEMETRY_SAMPLES = Topic("sextant.telemetry.samples", 3, "raw performance samples from the agent",
                          retention_ms=7 * 24 * 3600 * 1000)

ALL_TOPICS: tuple[Topic, ...] = (WORKLOAD_EVENTS, SERVER_EVENTS, CLOCK_EVENTS, MODEL_EVENTS, QUARANTINE_EVENTS,
                                 RECURRING_EVENTS, TENANT_EVENTS,
                                 AGENT_COMMANDS, SUBMISSIONS, DECISIONS, DEAD_LETTERS,
                                 TELEMETRY_SAMPLES)

_STREAM_PREFIX_TOPICS = {"workload-": WORKLOAD_EVENTS, "server-": SERVER_EVENTS,
                         "clock": CLOCK_EVENTS, "model-": MODEL_EVENTS, "quarantine-": QUARANTINE_EVENTS,
                         "template-": RECURRING_EVENTS, "tenant-": TENANT_EVENTS, "vc-": TENANT_EVENTS}


def topic_for_stream(stream: str) -> Topic:
    """The event topic of a stream id (`workload-<id>` → workloads, ...)."""
    for prefix, topic in _STREAM_PREFIX_TOPICS.items():
        if stream.startswith(prefix):
            return topic
    raise KeyError(f"no topic for stream {stream!r}")


def check_registry() -> None:
    """Topic names are unique and every event type has a name; raises `RuntimeError` otherwise.
    Nothing calls it yet (no start-up check is wired)."""
    names = [t.name for t in ALL_TOPICS]
    if len(set(names)) != len(names):
        raise RuntimeError("duplicate topic names")
    for name in EVENT_TYPES:
        if not name:
            raise RuntimeError("event without TYPE")
