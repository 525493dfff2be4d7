"""The workload page's target change: a form's fields to a `PerformanceTarget`, and back.

The form has a `type` (one of the kind's `TARGETS_BY_KIND`) and one input per field of each of those
types (`TARGET_FIELDS`, named `<type>.<field>`); only the chosen type's fields are read. Validation is
the contracts' own (the model's bounds) plus `target_fits`, as `PATCH /v1/workloads/{id}` checks.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter, ValidationError
from sextant_contracts.model import PerformanceTarget, WorkloadKind
from sextant_core.qos import TARGETS_BY_KIND, target_fits

# each target type's fields and their labels (the unit said)
TARGET_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "completion_time": (("seconds", "Completion time (s)"),),
    "deadline": (("at", "Deadline (absolute time, s)"),),
    "instruction_rate": (("ips", "Instruction rate (instructions/s)"),),
    "throughput_latency": (("qps", "Throughput (requests/s)"), ("p99_latency_ms", "p99 latency (ms)")),
}
_TARGET: TypeAdapter[Any] = TypeAdapter(PerformanceTarget)


def parse_target(form: dict[str, str], kind: WorkloadKind) -> Any:
    """The target a submitted form names for a workload of `kind`; `ValueError` saying why not."""
    kind_types = TARGETS_BY_KIND[kind]
    chosen = form.get("type", "")
    if chosen not in kind_types:
        raise ValueError(f"a {kind.value} workload takes a target of type {' or '.join(kind_types)}")
    body: dict[str, Any] = {"type": chosen}
    for name, label in TARGET_FIELDS[chosen]:
        raw = form.get(f"{chosen}.{name}", "").strip()
        try:
            body[name] = float(raw)
        except ValueError:
            raise ValueError(f"{label}: a number is needed, not {raw!r}") from None
    try:
        target = _TARGET.validate_python(body)
    except ValidationError as exc:
        raise ValueError("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None
    if not target_fits(kind, target):  # pragma: no cover - the type was checked above
        raise ValueError(f"a {kind.value} workload takes a target of type {' or '.join(kind_types)}")
    return target


def target_inputs(kind: WorkloadKind, current: Any) -> list[dict[str, Any]]:
    """The form's choices for a workload of `kind`: each type with its fields, labels and the
    current target's values (the current type first selected)."""
    now = current.model_dump() if current is not None else {}
    return [{"type": t, "selected": now.get("type") == t,
             "fields": [{"name": f"{t}.{n}", "id": f"t-{t}-{n}", "label": label,
                         "value": now.get(n, "") if now.get("type") == t else ""}
                        for n, label in TARGET_FIELDS[t]]}
            for t in TARGETS_BY_KIND[kind]]
