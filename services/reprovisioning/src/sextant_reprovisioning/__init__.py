"""sextant_reprovisioning."""
