"""`python -m coworkenv`: the same as the `coworkenv` command."""

from .cli import main

main()
