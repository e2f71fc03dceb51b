"""A person's text as we read and show it: a value from a fixed list however it is spelt
(every adapter reads it as the service does), and text shown where a line of its own would
be read as ours: in a brief, a hook's reason, a refusal an agent reads."""

from __future__ import annotations

import re
from typing import Any

# Whatever could start a line where the text is read (a terminal, a model's context): line
# and paragraph separators, and every control character, become spaces.
_BREAKS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str, limit: int) -> str:
    """`text` on one line, cut at `limit`: a user's text cannot add a line (a heading, a
    rule) to what it is shown in."""
    text = " ".join(_BREAKS.sub(" ", text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def canonical(value: Any, options: tuple[str, ...]) -> str | None:
    """The option `value` names, read regardless of case and with `-` for `_` ("Relates-To"
    is relates_to); None when it names none. No option holds a `-`, so it is unambiguous."""
    if not isinstance(value, str):
        return None
    if value in options:
        return value
    wanted = value.strip().casefold().replace("-", "_")
    return next((option for option in options if option.casefold() == wanted), None)
