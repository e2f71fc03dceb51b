"""`python -m palimpsest` runs the command line."""

from .launch import main

main()
