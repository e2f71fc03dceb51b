"""HTML built from Python, escaped by default.

Every value put into a page passes `escape`, unless it is `Markup`: HTML this package made
itself, from escaped parts. So text an agent wrote (a memory's text, title, tags, a
notebook's name, an actor) can only ever be shown, never run. No template engine: one is
not among the server's dependencies, and a page here is a few functions that join escaped
parts, which reads as plainly as a template and has no second syntax to learn.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from types import GeneratorType


class Markup(str):
    """HTML already safe to send: made here from constant text and escaped values."""

    __slots__ = ()


def escape(value: object) -> Markup:
    """`value` as text in HTML (quotes too, so it is safe in an attribute as well)."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def tag(name: str, /, *children: object, **attributes: object) -> Markup:
    """`<name attr="...">children</name>`: attribute values and children are escaped.

    A trailing `_` in an attribute's name is dropped (`class_`), `_` inside becomes `-`
    (`aria_label`); an attribute that is None or False is left out, True is written bare.
    """
    parts = [name]
    for key, value in attributes.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        parts.append(attr if value is True else f'{attr}="{escape(value)}"')
    opening = f"<{' '.join(parts)}>"
    if name in VOID:
        return Markup(opening)
    return Markup(f"{opening}{join(children)}</{name}>")


def join(parts: Iterable[object]) -> Markup:
    """The parts, escaped, one after the other; a list or generator among them is joined."""
    out = []
    for part in parts:
        nested = isinstance(part, list | tuple | GeneratorType)
        out.append(join(part) if nested else escape(part))  # type: ignore[arg-type]
    return Markup("".join(out))


VOID = {"input", "meta", "link", "br", "hr", "img"}
