"""sextant_agent."""
