"""How a person's text is shown where a line of its own would be read as ours: in a brief,
a hook's reason, a refusal an agent reads."""

from __future__ import annotations

import re

# Whatever could start a line where the text is read (a terminal, a model's context): line
# and paragraph separators, and every control character, become spaces.
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str, limit: int) -> str:
    """`text` on one line, cut at `limit`: a user's text cannot add a line (a heading, a
    rule) to what it is shown in."""
    text = " ".join(_BREAKS.sub(" ", text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
