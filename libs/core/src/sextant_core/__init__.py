"""sextant_core."""
