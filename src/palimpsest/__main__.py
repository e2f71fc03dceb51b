"""`python -m palimpsest` runs the command line."""

from .cli import main

main()
