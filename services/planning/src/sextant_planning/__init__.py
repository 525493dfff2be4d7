"""sextant_planning."""
