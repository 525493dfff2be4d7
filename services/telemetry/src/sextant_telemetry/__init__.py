"""sextant_telemetry."""
