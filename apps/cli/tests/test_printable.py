"""`sextant list` prints names a log may hold from before the API refused them (control and
bidirectional-formatting characters) as visible escapes, never raw."""

from __future__ import annotations

import pytest
from sextant_cli.ops import printable


@pytest.mark.parametrize(("raw", "shown"), [
    ("a\x00b", "a\\u0000b"),
    ("\x1b[31mred", "\\u001b[31mred"),
    ("invoice\u202etxt.exe", "invoice\\u202etxt.exe"),
    ("two\nlines", "two\\u000alines"),
    ("plain name é 夜", "plain name é 夜"),
])
def test_control_and_bidi_characters_are_shown_escaped(raw: str, shown: str) -> None:
    assert printable(raw) == shown
