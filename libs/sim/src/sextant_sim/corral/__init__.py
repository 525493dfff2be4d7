"""Corral's twin: racks under an oversubscribed core, a flow-level max-min network, W1/W2/W3.

`network` (topology and max-min fair rates), `workloads` (the thesis's W1, W2, W3), `jobs`
(replica placement and a job's pending tasks), `schedulers` (Yarn-CS with delay scheduling,
Corral's runtime), `twin` (the event-driven simulator), `experiment` (a workload under a policy).
The decision side is `sextant_core.corral`. Definitions: docs/corral/twin.md.
"""

TWIN_VERSION = "corral-twin-1"  # bump when the world (network, tasks, background) changes its numbers
