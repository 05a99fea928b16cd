"""auto-dream: a long-term memory for AI agents, in plain Markdown."""

__version__ = "0.1.0"
