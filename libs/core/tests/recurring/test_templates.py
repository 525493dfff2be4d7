"""Template keys from job names: instance parameters are stripped, the rest must match."""

from __future__ import annotations

import pytest
from sextant_core.recurring.templates import normalise_name, template_keys


@pytest.mark.parametrize("a,b", [
    ("daily_report_2011-05-03", "daily_report_2011-05-04"),
    ("ingest 20110503T0400", "ingest 20110504T0400"),
    ("etl-run-8f3a9c2e-1b2c-4d5e-8f90-0123456789ab", "etl-run-00000000-aaaa-bbbb-cccc-dddddddddddd"),
    ("shard_17_of_64", "shard_3_of_64"),
    ("build-a1b2c3d4e5", "build-ffee0011aa"),
    ("Hourly at 04:00", "hourly at 05:00"),
], ids=["date", "timestamp", "guid", "numbers", "hex-id", "time-and-case"])
def test_instances_of_one_template_share_a_key(a, b):
    assert normalise_name(a) == normalise_name(b)


@pytest.mark.parametrize("a,b", [
    ("daily_report", "weekly_report"),
    ("build-deadbeef", "build-cafe"),  # words made of hex letters only are not run ids
], ids=["different-words", "hex-words"])
def test_different_templates_differ(a, b):
    assert normalise_name(a) != normalise_name(b)


def test_keys_are_numbered_in_order_of_first_appearance():
    keys, names = template_keys(["b_1", "a_2", "b_3", "a_4", "c"])
    assert keys.tolist() == [0, 1, 0, 1, 2]
    assert names == ["b_<n>", "a_<n>", "c"]
