"""Template keys from free-form job names (spec/morpheus.md §3.1, §8.1: the lost matching rule).

The Google trace already carries a logical name per job (its templates are given); a platform
that sees only names needs the rule. Decision: a job's template is its name with every
instance-specific parameter replaced by a placeholder, in this order (earlier rules win):

1. GUIDs (8-4-4-4-12 hex) → `<guid>`;
2. dates and timestamps (`2011-05-03`, `20110503`, `2011-05-03T04:00:00`, `04:00:00`) → `<date>` / `<time>`;
3. hex run ids of 8 or more characters containing a digit → `<id>`;
4. any other run of digits → `<n>`;

then lower case. The script hash of the paper's method is not available in a name and is not
used. `template_keys` numbers the distinct normalised names in order of first appearance, so the
keys are deterministic for a given job order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"), "<guid>"),
    (re.compile(r"\d{4}-?\d{2}-?\d{2}(?:[T _]\d{2}:?\d{2}(?::?\d{2})?)?"), "<date>"),
    (re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b"), "<time>"),
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b"), "<id>"),
    (re.compile(r"\d+"), "<n>"),
)


def normalise_name(name: str) -> str:
    """The template of one job name (rules above)."""
    out = name.strip()
    for pattern, placeholder in _RULES:
        out = pattern.sub(placeholder, out)
    return out.lower()


def template_keys(names: Iterable[str]) -> tuple[np.ndarray, list[str]]:
    """(key per job as int64, the normalised name of each key) — keys in order of first appearance."""
    ids: dict[str, int] = {}
    keys = []
    for name in names:
        t = normalise_name(name)
        keys.append(ids.setdefault(t, len(ids)))
    return np.asarray(keys, dtype=np.int64), list(ids)
