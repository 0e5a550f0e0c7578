"""trainers: filled by its own issue."""
