"""reprovisioning (filled by its issue)."""
