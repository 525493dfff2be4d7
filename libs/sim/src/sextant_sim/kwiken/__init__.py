"""Kwiken's request simulator: service DAGs with heavy-tailed stages, run request by request.

`families` (the stage latency laws), `library` (the DAG generator), `requests` (periods of requests
and the per-stage policies applied to them). The decision side is `sextant_core.kwiken`.
"""
