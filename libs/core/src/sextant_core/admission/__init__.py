"""admission (filled by its issue)."""
