"""docs/api/README.md tells a first user what the platform's twin can run: the target each kind takes
(as `sextant_core.qos.TARGETS_BY_KIND` enforces), the twin refs the agent knows, and a submission
example — memcached in a container — that the agent runs instead of failing it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sextant_admission.schemas import WorkloadRequest
from sextant_agent.settings import Settings
from sextant_agent.twin import TwinExecutor
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import WorkloadKind
from sextant_core.profiles import policy_set
from sextant_core.qos import TARGETS_BY_KIND
from sextant_core.testing.builders import alloc, through_placement
from sextant_core.workflow import Decider

API_MD = Path(__file__).resolve().parents[3] / "docs" / "api" / "README.md"
ROW = re.compile(r"^\| `(batch|analytics|service)` \| (.+?) \| (.+?) \|$", re.MULTILINE)


def kind_rows() -> dict[str, tuple[list[str], list[str]]]:
    """kind → (target types, twin refs) from the docs' table."""
    return {m[1]: (re.findall(r"`([a-z_]+)`", m[2]), re.findall(r"`([a-z0-9-]+)`", m[3]))
            for m in ROW.finditer(API_MD.read_text())}


def memcached_example() -> dict[str, object]:
    blocks = re.findall(r"```json\n(.*?)```", API_MD.read_text(), re.DOTALL)
    (block,) = [b for b in blocks if "memcached" in b and '"kind"' in b]
    return json.loads(block)


def default_executor() -> TwinExecutor:
    scenario = Settings.model_fields["agent_scenario"].default
    return TwinExecutor(scenario, 1, speed=1.0, wall0=0.0)


def test_the_docs_list_each_kinds_targets_and_twin_refs_the_agent_knows() -> None:
    rows = kind_rows()
    assert sorted(rows) == sorted(k.value for k in WorkloadKind)
    ex = default_executor()
    for kind, (targets, refs) in rows.items():
        assert targets == list(TARGETS_BY_KIND[WorkloadKind(kind)]), kind
        assert refs, kind
        for ref in refs:
            assert ex.resolve(ref) is not None and ex.resolve(ref).kind.value == kind, ref  # type: ignore[union-attr]


def test_the_memcached_example_runs_through_the_agent() -> None:
    request = WorkloadRequest.model_validate(memcached_example())
    ex = default_executor()
    view = Decider("agent", policy_set("foundation"))
    facts: list[ev.Event] = []

    def append(events: list[ev.Event]) -> None:
        for e in events:
            pos = view.position + 1
            view.fold([Envelope.wrap(e, id=f"e{pos}", source="test", stream_version=0, time=e.at).with_position(pos)])
            ex.observe(e, view.state)
            facts.append(e)

    sid, plat = ex.setup.servers[0]
    append(list(ex.servers()))
    append([ev.WorkloadSubmitted(at=0.0, workload_id="cache-1", tenant="t1", kind=request.kind, target=request.target,
                                 spec=request.spec, fast_path=True)])
    a = alloc((sid, plat.capacity.cores, plat.capacity.memory_gb / 2))
    append(through_placement("cache-1", a, at=1.0))
    append(ex.execute(cmd.StartWorkload(workload_id="cache-1", allocation=a), view.state, 1.0))
    samples = []
    for wall in range(11, 3600, 10):
        happenings, got = ex.advance(view.state, float(wall))
        for _key, fs in happenings:
            append(fs)
        samples.extend(got)
    assert not [f for f in facts if isinstance(f, ev.WorkloadFailed)]
    assert any(isinstance(f, ev.WorkloadStarted) for f in facts)
    assert samples and all(s.workload_id == "cache-1" for s in samples)
