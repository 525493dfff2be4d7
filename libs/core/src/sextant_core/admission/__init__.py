"""Admission control: ARQ, Paragon's multiclass admission with resource-quality
classes, queues, server pools, bypassing, the Eq. 2 waiting bound and a stability check (§4).

    from sextant_core.admission.arq import ArqAdmission          # the AdmissionPolicy
    from sextant_core.admission.availability import TargetAvailability, ParagonAvailability

Modules: `quality` (Q of workloads and servers, classes, pools), `queues` (the class queues in the
state, the bypass bound), `waiting` (slack, free-server probability, Eq. 2), `stability` (traffic
equations, load factor), `availability` (what the planner's side offers), `arq` (the decision).
This package's `__init__` imports nothing heavy: the process manager uses `queues`.
"""
