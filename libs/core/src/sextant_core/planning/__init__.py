"""planning (filled by its issue)."""
