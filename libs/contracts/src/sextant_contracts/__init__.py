"""sextant_contracts — the language of the system: events, commands, envelope, topics, codec.

Pure (pydantic only). Everything that crosses a process boundary is defined here.
"""

from . import codec, commands, events, kwiken, model, recurring, topics, upcasters, vc
from .envelope import Envelope, EnvelopeError
from .ids import derive_id, seed_from
from .simd import pin_numpy_simd

pin_numpy_simd()  # before anything imports numpy: nothing in this package does (simd.py)

__all__ = ["Envelope", "EnvelopeError", "codec", "commands", "derive_id", "events", "kwiken", "model",
           "recurring", "seed_from", "topics", "upcasters", "vc"]
