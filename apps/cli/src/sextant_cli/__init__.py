"""sextant_cli."""
