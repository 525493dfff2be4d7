"""Console sessions: an API token is exchanged once (the login form's POST) for a session id in an
HttpOnly, SameSite=Strict cookie; the token never appears in a URL and never reaches the page.

The session keeps the token server-side (in this process's memory) and every request
re-authenticates it with the API's own `Gatekeeper`, so a revoked or rotated token ends its
console sessions at the next click. Each session has a CSRF token, rendered into the forms of
actions and compared (constant time) on every POST. Sessions live `max_age_s` (8 h) and are lost
when the process restarts (the user logs in again): a paper gap of the issue, chosen for a single
admission process; several API replicas would need a shared session table.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

COOKIE = "sextant_console"


@dataclass
class Session:
    token: str | None  # None: open mode (no tenant exists yet), the API asks for no token either
    csrf: str
    expires_at: float


@dataclass
class Sessions:
    max_age_s: float = 8 * 3600.0
    clock: Callable[[], float] = time.monotonic
    _by_id: dict[str, Session] = field(default_factory=dict)

    def open(self, token: str | None) -> str:
        """A new session for an authenticated `token`; returns its id (the cookie's value)."""
        now = self.clock()
        for sid in [s for s, v in self._by_id.items() if v.expires_at <= now]:
            del self._by_id[sid]
        sid = secrets.token_urlsafe(32)
        self._by_id[sid] = Session(token, secrets.token_urlsafe(32), now + self.max_age_s)
        return sid

    def get(self, sid: str | None) -> Session | None:
        s = self._by_id.get(sid) if sid else None
        if s is not None and s.expires_at <= self.clock():
            self.close(sid)
            return None
        return s

    def close(self, sid: str | None) -> None:
        if sid:
            self._by_id.pop(sid, None)

    @staticmethod
    def csrf_ok(session: Session, presented: str | None) -> bool:
        return bool(presented) and hmac.compare_digest(session.csrf.encode(), (presented or "").encode())
