"""placement (filled by its issue)."""
