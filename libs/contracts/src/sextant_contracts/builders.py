"""Trusted builders: an event model built from a trusted payload without pydantic validation.

A stored row whose checksum matches (`sextant_contracts.trusted`) holds the canonical JSON of an
event that validated as its type at the type's current schema version: every field present, each
value already of the type validation gives it once JSON-decoded — but for the types JSON has no
word for. `builder(cls)` is straight-line code generated once per model class that makes the
instance pydantic's validator would make from such a payload: the same `__dict__` (fields in
declaration order), `__pydantic_fields_set__` (every field), no extra and no private values, with

* enums looked up by value, tuples made from arrays, dicts copied (enum keys looked up),
* nested models and discriminated unions of models built by their own builders,
* `str`, `int`, `float`, `bool`, `None`, `Literal[...]`, `Any` and unions of those as they are.

A class with anything else — a validator, `model_post_init`, private attributes, an alias, a union
of models without a discriminator, a type without a rule above (`datetime`, `set`, …) — has no
builder (None): its events are validated (`Envelope.event`). A payload that does not have exactly
the class's fields (a field added or removed since the row was written, at the same schema
version) or a value the code cannot take (an unknown enum value) raises `Untrusted`, and the
caller validates instead: the validator decides, as for an untrusted row.

Equality with validation is checked on every event of the committed fixture logs
(`tests/contracts/test_trusted_builders.py`). Speed (docs/platform/replay.md, "Sixth round"):
about 2× faster than pydantic-core's validation on the log's nested events, less on flat ones.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

_new = object.__new__
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__

_IDENTITY = (str, int, float, bool, type(None))


class Untrusted(ValueError):
    """The payload is not what the class's builder takes: validate it instead."""


class _Unsupported(Exception):
    pass


_BUILDERS: dict[type, Callable[[dict[str, Any]], Any] | None] = {}


def builder(cls: type[BaseModel]) -> Callable[[dict[str, Any]], Any] | None:
    """The trusted builder of `cls` (module doc), or None when `cls` has none."""
    try:
        return _BUILDERS[cls]
    except KeyError:
        pass
    try:
        built: Callable[[dict[str, Any]], Any] | None = _generate(cls)
    except _Unsupported:
        built = None
    _BUILDERS[cls] = built
    return built


def _strip(tp: Any) -> Any:
    """The type without `Annotated`'s constraints (trusted: they held when the row was written)."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _converter(tp: Any, discriminator: Any = None) -> Callable[[Any], Any] | None:
    """None: the JSON value is the value; else a function of the JSON value. `_Unsupported`."""
    if discriminator is None and typing.get_origin(tp) is typing.Annotated:
        for meta in typing.get_args(tp)[1:]:
            d = getattr(meta, "discriminator", None)
            if d is not None:
                discriminator = d
    tp = _strip(tp)
    if tp is Any or tp in _IDENTITY:
        return None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Literal:
        if all(isinstance(a, _IDENTITY) and not isinstance(a, enum.Enum) for a in args):
            return None
        raise _Unsupported(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        lookup = tp._value2member_map_

        def to_enum(v: Any) -> Any:
            try:
                return lookup[v]
            except (KeyError, TypeError):
                raise Untrusted(f"{v!r} is no {tp.__name__}") from None
        return to_enum
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        b = builder(tp)
        if b is None:
            raise _Unsupported(tp)
        return b
    if origin is typing.Union or origin is types.UnionType:
        return _union(args, discriminator)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            inner = _converter(args[0])
            if inner is None:
                return tuple
            return lambda v: tuple([inner(x) for x in v])  # type: ignore[misc]
        if not args:
            raise _Unsupported(tp)
        convs = [_converter(a) for a in args]
        n = len(convs)

        def fixed(v: Any) -> tuple[Any, ...]:
            if len(v) != n:
                raise Untrusted("tuple length")
            return tuple([x if c is None else c(x) for c, x in zip(convs, v, strict=True)])
        return fixed
    if origin is list:
        inner = _converter(args[0]) if args else None
        if inner is None:
            return list
        return lambda v: [inner(x) for x in v]  # type: ignore[misc]
    if origin is dict:
        key = _converter(args[0]) if args else None
        value = _converter(args[1]) if args else None
        if key is None and value is None:
            return dict
        k = key or (lambda x: x)
        val = value or (lambda x: x)
        return lambda v: {k(a): val(b) for a, b in v.items()}
    raise _Unsupported(tp)


def _union(args: tuple[Any, ...], discriminator: Any) -> Callable[[Any], Any] | None:
    members = [_strip(a) for a in args]
    plain = [m for m in members if not (isinstance(m, type) and issubclass(m, BaseModel))]
    models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
    if not models:  # e.g. `float | None`: JSON's types are the values' (smart mode keeps them)
        for m in plain:
            if _converter(m) is not None:
                raise _Unsupported(args)
        return None
    if not isinstance(discriminator, str) or any(p is not type(None) for p in plain):
        raise _Unsupported(args)  # a union of models validation chooses among: not replicated
    by_tag: dict[Any, Callable[[Any], Any]] = {}
    for m in models:
        tag = m.model_fields.get(discriminator)
        if tag is None or typing.get_origin(_strip(tag.annotation)) is not typing.Literal:
            raise _Unsupported(m)
        b = builder(m)
        if b is None:
            raise _Unsupported(m)
        for value in typing.get_args(_strip(tag.annotation)):
            by_tag[value] = b
    optional = bool(plain)

    def pick(v: Any) -> Any:
        if v is None and optional:
            return None
        try:
            b = by_tag[v[discriminator]]
        except (KeyError, TypeError):
            raise Untrusted("no such member") from None
        return b(v)
    return pick


def _generate(cls: type[BaseModel]) -> Callable[[dict[str, Any]], Any]:
    d = cls.__pydantic_decorators__
    if (d.validators or d.field_validators or d.root_validators or d.model_validators
            or d.field_serializers or d.model_serializers or d.computed_fields
            or cls.model_post_init is not BaseModel.model_post_init
            or cls.__private_attributes__ or cls.model_config.get("extra") == "allow"
            or getattr(cls, "__pydantic_root_model__", False)):
        raise _Unsupported(cls)
    fields = cls.model_fields
    env: dict[str, Any] = {"new_": _new, "cls": cls, "set_dict": _set_dict, "set_fs": _set_fields_set,
                           "set_extra": _set_extra, "set_private": _set_private, "Untrusted": Untrusted,
                           "names": tuple(fields)}
    items = []
    for i, (name, f) in enumerate(fields.items()):
        if f.alias not in (None, name) or f.validation_alias not in (None, name) or f.exclude:
            raise _Unsupported(name)
        conv = _converter(f.annotation, f.discriminator)
        if conv is None:
            items.append(f"{name!r}: d[{name!r}]")
        else:
            env[f"c_{i}"] = conv
            items.append(f"{name!r}: c_{i}(d[{name!r}])")
    lines = [
        "def build(d):",
        f"    if len(d) != {len(fields)}:",
        "        raise Untrusted('not the class fields')",
        "    try:",
        "        values = {" + ", ".join(items) + "}",
        "    except (KeyError, TypeError, AttributeError) as exc:",
        "        raise Untrusted(str(exc)) from None",
        "    obj = new_(cls)",
        "    set_dict(obj, values)",
        "    set_fs(obj, set(names))",
        "    set_extra(obj, None)",
        "    set_private(obj, None)",
        "    return obj",
    ]
    exec("\n".join(lines), env)  # noqa: S102 - code built from the model's own field names
    build: Callable[[dict[str, Any]], Any] = env["build"]
    return build
