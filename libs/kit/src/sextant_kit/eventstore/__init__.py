"""Event stores: `postgres.PostgresEventStore` (the system of record) and `memory.MemoryEventStore`
(its in-memory twin for the simulator and unit tests). Both implement the ports of `ports.py`
and pass the same contract suite (`tests/contracts/`).

Import the implementation you need from its module; this package imports nothing heavy.
"""
