"""sextant_admission."""
