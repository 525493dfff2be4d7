"""The kit's error tree. Services translate these to HTTP only in their `api.py`.

- `KitError`: base of everything the kit raises on purpose.
- `ConcurrencyError`: an append lost an optimistic-concurrency race on (stream, version): the
  stream's current version is not the one the caller expected. Nothing was written; the caller
  re-reads and decides again. `HeadMovedError` (a subclass): the log grew past `expected_head`.
- `DuplicateEventError`: an envelope id is already in the store (ids are unique in the log).
  Nothing was written.
- `TransientError`: a dependency (PostgreSQL, Kafka) is unavailable; waiting and retrying is the
  right reaction. `is_transient(exc)` recognises the driver errors that mean the same thing.
- `PoisonMessage`: a record that can never be processed (bad envelope, a handler that keeps
  failing); the consumer loop dead-letters it with `reason`.

`dependency_of(exc)` names the dependency a transient error comes from (`kafka`, `postgres`, or
None when the exception does not say), so an outage is logged once per dependency (`logs`).
"""

from __future__ import annotations


class KitError(Exception):
    """Base of the kit's errors."""


class ConcurrencyError(KitError):
    """The stream is not at the expected version (or the version was taken concurrently)."""

    def __init__(self, stream: str, expected: int | None, actual: int | None) -> None:
        super().__init__(f"stream {stream!r}: expected version {expected}, found {actual}")
        self.stream = stream
        self.expected = expected
        self.actual = actual


class HeadMovedError(ConcurrencyError):
    """`expected_head` was given and the log's last position was another one when the append took
    the position lock: something was appended after the state the caller decided on."""

    def __init__(self, expected_head: int, actual_head: int) -> None:
        KitError.__init__(self, f"log head: expected position {expected_head}, found {actual_head}")
        self.stream = ""
        self.expected = expected_head
        self.actual = actual_head


class DuplicateEventError(KitError):
    """An envelope id is already recorded."""

    def __init__(self, event_id: str) -> None:
        super().__init__(f"event id {event_id!r} already recorded")
        self.event_id = event_id


class FlushFirst(KitError):
    """Raised by a staging handler (`consumer.Staging`) inside a batch when it cannot decide on
    the staged state (it needs the log past it): the consumer loop commits what it staged and
    handles the record on its own. Never a failure of the record."""


class TransientError(KitError):
    """A dependency is temporarily unavailable; retry with backoff."""


class LogUnfoldable(TransientError):
    """A decider cannot fold the log past an event (a fold bug, or a log the code does not know).
    No input is to blame, so none is quarantined: the consumer waits and retries, with an error
    logged each time, until the code or the log is fixed — quarantining every record meanwhile
    would fail every live workload."""


class PoisonMessage(KitError):
    """A record that cannot be processed; `reason` is a short constant-ish explanation."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_FILE_ERRORS = (FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError,
                PermissionError)


def is_transient(exc: BaseException) -> bool:
    """True when `exc` means "a dependency is down or busy", not "this input is bad".

    Recognised: `TransientError`, OS-level connection errors and timeouts, asyncpg's connection and
    "cannot connect now" errors, SQLAlchemy's `OperationalError`/`InterfaceError`/`DBAPIError` with
    `connection_invalidated`, and aiokafka's retriable errors and connection errors.
    """
    if isinstance(exc, (TransientError, ConnectionError, TimeoutError)):
        return True
    if isinstance(exc, OSError) and not isinstance(exc, _FILE_ERRORS):
        return True
    try:
        import asyncpg

        if isinstance(exc, (asyncpg.exceptions.PostgresConnectionError,
                            asyncpg.exceptions.CannotConnectNowError,
                            asyncpg.exceptions.InterfaceError,
                            asyncpg.exceptions.TooManyConnectionsError,
                            asyncpg.exceptions.AdminShutdownError,
                            asyncpg.exceptions.SerializationError,
                            asyncpg.exceptions.DeadlockDetectedError)):
            return True
    except ImportError:  # pragma: no cover - asyncpg is a kit dependency
        pass
    try:
        from sqlalchemy import exc as sa_exc

        if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
            return True
        if isinstance(exc, (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError)):
            return True
        if isinstance(exc, sa_exc.DBAPIError) and exc.orig is not None:
            return is_transient(exc.orig)
    except ImportError:  # pragma: no cover
        pass
    try:
        from aiokafka import errors as kafka_errors

        if isinstance(exc, kafka_errors.KafkaError) and getattr(exc, "retriable", False):
            return True
        if isinstance(exc, (kafka_errors.KafkaConnectionError, kafka_errors.KafkaTimeoutError,
                            kafka_errors.NodeNotReadyError, kafka_errors.RequestTimedOutError)):
            return True
    except ImportError:  # pragma: no cover
        pass
    cause = exc.__cause__
    return cause is not None and cause is not exc and is_transient(cause)


_DRIVERS = (("aiokafka", "kafka"), ("asyncpg", "postgres"), ("sqlalchemy", "postgres"), ("psycopg", "postgres"))


def _driver(module: str) -> str | None:
    return next((dep for prefix, dep in _DRIVERS if module.startswith(prefix)), None)


def dependency_of(exc: BaseException) -> str | None:
    """`"kafka"` or `"postgres"`: the driver whose error `exc` is (aiokafka; asyncpg, SQLAlchemy),
    or — for an OS-level error such as `ConnectionRefusedError` — the driver it was raised in (the
    innermost frame of a driver in its traceback), following causes; None when nothing says."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        dep = _driver(type(cur).__module__ or "")
        tb, in_frames = cur.__traceback__, None
        while dep is None and tb is not None:
            in_frames = _driver(str(tb.tb_frame.f_globals.get("__name__", ""))) or in_frames
            tb = tb.tb_next
        if dep or in_frames:
            return dep or in_frames
        cur = cur.__cause__ or cur.__context__
    return None
