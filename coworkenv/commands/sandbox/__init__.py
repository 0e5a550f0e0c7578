"""`coworkenv sandbox build-image|status|reap`: the Docker sandbox behind run_command, and whether
run_python's bubblewrap sandbox works here; one module per sub-command."""
