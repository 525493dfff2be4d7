"""sextant_infra."""
