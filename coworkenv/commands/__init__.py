"""One module per command group; each defines `register(app)`. Discovered, never listed by hand."""
