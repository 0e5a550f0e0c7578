"""synth: filled by its own issue."""
