"""`python -m sextant_telemetry.main`: the telemetry service process (samples → verdicts, Ticks)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id
from sextant_contracts.topics import TELEMETRY_SAMPLES
from sextant_kit.bootstrap import Runtime, serve, with_patience
from sextant_kit.errors import ConcurrencyError
from sextant_kit.runtime import DeciderHandler

from .api import routers
from .handlers import Aggregator, make_decider
from .samples import SampleConsumer
from .settings import Settings

log = logging.getLogger(__name__)


def main() -> None:
    settings = Settings()  # type: ignore[call-arg]
    decider = make_decider(settings)
    aggregator = Aggregator(settings.verdict_window_s)

    async def samples(rt: Runtime, stop: asyncio.Event) -> None:
        handler = DeciderHandler("telemetry", decider, rt.store)
        await with_patience("telemetry: event store", handler.start, 0.5, 5.0, stop)
        source = rt.source("telemetry", [TELEMETRY_SAMPLES.name])
        await with_patience("telemetry: kafka", source.start, 0.5, 5.0, stop)
        consumer = SampleConsumer(source, rt.store, rt.publisher, handler, aggregator)
        while not stop.is_set():
            try:
                await consumer.run_once()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # outages: wait and retry what is pending, never crash-loop
                log.warning("telemetry: %r; retrying", exc)
                await asyncio.sleep(1.0)

    async def ticks(rt: Runtime, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                seq = await rt.store.stream_version("clock")
                tick = ev.Tick(at=time.time(), seq=seq, period_s=settings.tick_period_s)
                env = Envelope.wrap(tick, id=derive_id("tick", seq), source="telemetry",
                                    stream_version=seq + 1, time=tick.at)
                await rt.store.append("clock", seq, [env])
            except ConcurrencyError:
                pass  # another instance logged this tick
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("telemetry: tick failed (%r); retrying", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=settings.tick_period_s)

    asyncio.run(serve(settings, [samples, ticks], routers=lambda rt: routers(decider, aggregator, rt.operator_gate())))


if __name__ == "__main__":
    main()
