"""The `palimpsest` command's entry point: the guard's hook answers at once, without
loading the command line (see hook_guard.py); everything else goes to `cli.main`, which
imports only the modules of the command it runs."""

from __future__ import annotations

import sys


def main() -> None:
    from .hook_guard import fast_main

    code = fast_main(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from .cli.app import main as cli_main  # loads only the modules of the command run

    cli_main()
