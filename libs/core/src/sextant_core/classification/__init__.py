"""classification (filled by its issue)."""
