"""sextant_profiling."""
