"""Pure parts of the public API's plumbing: problem paths, the token bucket, token format."""

from __future__ import annotations

import re

import pytest
from sextant_kit.problems import field_path
from sextant_kit.ratelimit import RateLimiter
from sextant_kit.tenancy import TenancyError, check_name, new_token


@pytest.mark.parametrize(("loc", "sent", "path"), [
    (("target", "throughput_latency", "qps"), {"target": {"type": "throughput_latency", "qps": -1}}, "$.target.qps"),
    (("kind",), {"target": {}}, "$.kind"),  # missing: named all the same
    (("spec", "container", "command", 2), {"spec": {"command": ["a", "b", 3]}}, "$.spec.command[2]"),
    ((), [1, 2], "$"),
], ids=["union-tag-dropped", "missing-field", "list-index", "root"])
def test_field_path_names_what_the_client_sent(loc: tuple[object, ...], sent: object, path: str) -> None:
    assert field_path(loc, sent) == path


def test_token_bucket_arithmetic() -> None:
    now = [0.0]
    limiter = RateLimiter(clock=lambda: now[0])
    # burst 2, 0.5 token/s: two pass; the third waits (1 - 0) / 0.5 = 2 s
    assert [limiter.take("t", 0.5, 2) for _ in range(3)] == [0.0, 0.0, 2.0]
    now[0] = 1.0  # half a token back: (1 - 0.5) / 0.5 = 1 s to go
    assert limiter.take("t", 0.5, 2) == 1.0
    now[0] = 2.0  # one token: it passes
    assert limiter.take("t", 0.5, 2) == 0.0
    assert limiter.take("other", 0.5, 2) == 0.0  # buckets are per key


def test_tokens_are_random_and_only_their_hash_is_kept() -> None:
    (t1, id1, h1), (t2, _, _) = new_token(), new_token()
    assert t1 != t2 and re.fullmatch(r"sxt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", t1)
    assert t1.split("_", 2)[1] == id1 and len(h1) == 64 and t1.split("_", 2)[2] not in h1
    assert check_name("team-a_1") == "team-a_1"
    with pytest.raises(TenancyError):
        check_name("Team A")
