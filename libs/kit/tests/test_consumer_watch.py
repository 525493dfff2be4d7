"""The readiness rule of `sextant_kit.kafka.lag.ConsumerWatch` on given readings (no broker): a
group with no live member is down; a group whose lag does not move its committed offsets for
longer than `stall_s` is not consuming; a verdict older than three intervals is not trusted."""

from __future__ import annotations

import asyncio

from sextant_kit.kafka.lag import ConsumerWatch, GroupLag

TP = ("sextant.events.workloads", 0)


def reading(members: int = 1, lag: int | None = 0, offset: int = 10) -> dict[str, GroupLag]:
    return {"planning": GroupLag("planning", "Stable" if members else "Empty", members, lag, {TP: offset})}


def test_a_group_without_a_live_member_is_down() -> None:
    now = [0.0]
    watch = ConsumerWatch("unused:9092", ["planning"], clock=lambda: now[0])
    assert watch.judge(reading()) is True
    assert watch.judge(reading(members=0)) is False and watch.down == ["planning"]
    assert watch.judge({}) is False  # the group does not exist (yet)


def test_a_lag_that_does_not_move_for_stall_s_is_not_consuming() -> None:
    now = [0.0]
    watch = ConsumerWatch("unused:9092", ["planning"], stall_s=30.0, clock=lambda: now[0])
    assert watch.judge(reading(lag=5, offset=10))
    now[0] = 29.0
    assert watch.judge(reading(lag=8, offset=10))  # behind, but not for long yet
    now[0] = 31.0
    assert not watch.judge(reading(lag=9, offset=10))
    now[0] = 32.0
    assert watch.judge(reading(lag=3, offset=16))  # it committed: consuming again
    now[0] = 100.0
    assert watch.judge(reading(lag=0, offset=16))  # idle and caught up is fine


def test_the_check_trusts_only_a_recent_reading() -> None:
    now = [0.0]
    watch = ConsumerWatch("unused:9092", ["planning"], interval_s=2.0, clock=lambda: now[0])
    assert asyncio.run(watch.check()) is False  # no reading yet
    watch.judge(reading())
    assert asyncio.run(watch.check()) is True
    now[0] = 7.0
    assert asyncio.run(watch.check()) is False
    assert asyncio.run(ConsumerWatch("unused:9092", []).check()) is True  # nothing to watch
