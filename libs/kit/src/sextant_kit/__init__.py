"""sextant_kit."""
