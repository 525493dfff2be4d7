"""sextant_classification."""
