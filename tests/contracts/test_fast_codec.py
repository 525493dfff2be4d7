"""The codec's fast paths give what the general paths give: `codec.loads` (pydantic-core's JSON
parser, `json.loads` for what it refuses) the same values as `json.loads`, floats bit for bit, on
every payload and row of the committed fixture logs; `codec.dumps` of a model (one `json.dumps` of
its JSON-mode dump, `_normalise` only for -0.0 or a refusal) the same text as the `_normalise`
walk, on every fixture event."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from sextant_cli.demo import read_recorded
from sextant_contracts import codec
from sextant_kit.eventstore import rows

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "fixtures").glob("*.jsonl.gz"))


def identical(a: Any, b: Any) -> bool:
    """Equal with equal types all the way down, key order included, floats bit for bit."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(identical(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b) or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


def general_dumps(value: Any) -> str:
    """`codec.dumps` as it was: the `_normalise` walk of the JSON-mode dump."""
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    return json.dumps(codec._normalise(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)


@pytest.fixture(scope="module")
def fixture_envelopes() -> list[Any]:
    assert FIXTURES
    return [env for path in FIXTURES for env in read_recorded(path)]


def test_loads_equals_json_loads_on_every_stored_row(fixture_envelopes: list[Any]) -> None:
    types = set()
    for env in fixture_envelopes:
        columns, _, payload = rows.encode_line(env).partition("\t")
        for text in (columns, payload):
            assert identical(codec.loads(text), json.loads(text))
            assert identical(codec.loads(text.encode()), json.loads(text))
        types.add(env.type)
    assert len(types) >= 10


@pytest.mark.parametrize("text", ["-0.0", "0.1", "5e-324", "1.7976931348623157e308", "1e400", "NaN", "-Infinity",
                                  "123456789012345678901234567890", '{"a":1,"a":2}', '"\\ud83d\\ude00"',
                                  '"\\ud83d"', '[1.0,1,true,null,"x"]', "0.30000000000000004"])
def test_loads_edge_cases_as_json_loads(text: str) -> None:
    assert identical(codec.loads(text), json.loads(text))


@pytest.mark.parametrize("text", ["", "[1,]", '"\x00"', "{", "nul"])
def test_loads_refuses_what_json_loads_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        codec.loads(text)


def test_dumps_of_every_fixture_event_is_the_general_path(fixture_envelopes: list[Any]) -> None:
    for env in fixture_envelopes:
        event = env.event()
        assert codec.dumps(event) == general_dumps(event)
        assert codec.dumps(env) == general_dumps(env)


class Loose(BaseModel):
    value: Any


@pytest.mark.parametrize("value", [-0.0, [-0.0, 1.0, -0.01], {"b": -0.0, "a": "-0.0,"}, {"x": float("nan")},
                                   {"z": 1, "é": "ü", "a": [1.5, {"k": (1, 2)}]}, "-0.0", {"-0.0": -0.0}])
def test_dumps_of_a_model_normalises_like_the_general_path(value: Any) -> None:
    model = Loose(value=value)
    assert codec.dumps(model) == general_dumps(model)
    assert "-0.0" not in codec.dumps(Loose(value=-0.0))
