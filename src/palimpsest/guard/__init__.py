"""The guard: whether a command an agent is about to run is refused by a `forbidden` rule.

Pure functions, no I/O: `lexer` reads a command line as the shell would (`quoting` finds
where its quotes and substitutions end), `commands` finds the simple commands it runs
(`wrappers` and the texts `scripts` finds seen through: shells' scripts, aliases, inline
code), `patterns` matches them against a rule's command patterns, `runtime` says whether
words only known when they run could make them match, `workdir` where a line's `cd` takes
its relative paths, and `decide` gives the answer. `rules` says which rules apply where a
command runs, and `unbound` what to ask where a project's binding names no notebook. The
service reads the rules that apply; the hook answers a coding agent with them.
"""

from .commands import SimpleCommand, Unparseable, simple_commands
from .decide import Decision, Refusal, decide
from .patterns import Pattern, compile_pattern, matches

__all__ = [
    "Decision",
    "Pattern",
    "Refusal",
    "SimpleCommand",
    "Unparseable",
    "compile_pattern",
    "decide",
    "matches",
    "simple_commands",
]
