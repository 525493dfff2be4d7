"""sextant_sim."""
