"""Identifiers: a prefix naming what it is, then time-ordered Crockford base32."""

from __future__ import annotations

import secrets
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def new_id(prefix: str) -> str:
    """`prefix_` + 10 characters of milliseconds + 10 random: sortable by creation time."""
    number = (int(time.time() * 1000) << 50) | secrets.randbits(50)
    chars = []
    for _ in range(20):
        number, digit = divmod(number, 32)
        chars.append(_ALPHABET[digit])
    return f"{prefix}_{''.join(reversed(chars))}"
