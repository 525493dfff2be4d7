"""The agent appends the twin's offline seeding campaign once, for profiles that learn from it."""

from __future__ import annotations

from sextant_agent.main import seed_knowledge
from sextant_agent.twin import TwinExecutor
from sextant_kit.eventstore.memory import MemoryEventStore


async def test_campaign_is_appended_once_per_model_stream() -> None:
    executor = TwinExecutor("smoke", 1, speed=1000.0, wall0=0.0)
    store = MemoryEventStore()
    first = await seed_knowledge(store, executor, "sextant")
    again = await seed_knowledge(store, executor, "sextant")  # a restarted agent adds nothing
    log = await store.read_all(0, limit=100_000)
    assert first > 0 and again == 0
    assert len(log) == first and {e.type for e in log} == {"KnowledgeSeeded"}
    assert len({e.id for e in log}) == first
    assert all(e.stream.startswith("model-") for e in log) and len({e.stream for e in log}) >= 2


async def test_profiles_without_a_learning_classifier_get_no_campaign() -> None:
    executor = TwinExecutor("smoke", 1, speed=1000.0, wall0=0.0)
    store = MemoryEventStore()
    assert await seed_knowledge(store, executor, "foundation") == 0
    assert await store.read_all(0, limit=10) == []
