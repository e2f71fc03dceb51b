"""The pages' HTML is escaped by default: whatever an agent wrote stays text, in element
content and in attributes alike, however it is nested."""

from __future__ import annotations

from palimpsest.web.html import Markup, escape, join, tag
from palimpsest.web.pages.common import Viewer
from palimpsest.web.pages.memory import memory

HOSTILE = "\"'><script>alert(1)</script>&"


def test_text_and_attributes_are_escaped_and_markup_made_here_is_kept() -> None:
    made = tag("a", HOSTILE, href=HOSTILE, title=[HOSTILE])
    assert "<script>" not in made and "\"'>" not in made
    assert made.startswith('<a href="&quot;&#x27;&gt;&lt;script&gt;')
    assert tag("p", made).count("<a ") == 1  # made here: kept, not escaped twice
    assert join([HOSTILE, [HOSTILE, (HOSTILE,)]]).count("&lt;script&gt;") == 3
    assert escape(None) == "" and isinstance(escape(1), Markup)
    assert tag("input", disabled=True, hidden=False) == "<input disabled>"


def test_a_memory_page_holds_no_markup_from_the_memory() -> None:
    """Every field an agent writes, and every value of its history, rendered as text."""
    shown = {"id": "m_1", "text": HOSTILE, "title": HOSTILE, "tags": [HOSTILE],
             "notebook": HOSTILE, "kind": "fact", "status": "active", "author": HOSTILE,
             "why": HOSTILE, "source": HOSTILE, "status_note": HOSTILE,
             "version": 2}  # fmt: skip
    links = [{"type": "relates_to", "source": "m_1", "target": HOSTILE}]
    events = [{"version": 1, "op": HOSTILE, "actor": HOSTILE, "at": HOSTILE, "note": HOSTILE,
               "changes": {HOSTILE: {"old": HOSTILE, "new": [HOSTILE]}}}]  # fmt: skip
    viewer = Viewer(HOSTILE, "editor", HOSTILE, HOSTILE)
    versions = [{"version": 1, "op": HOSTILE, "actor": HOSTILE, "at": HOSTILE}]
    page = memory(viewer, {"memory": shown, "links": links, "versions": versions}, events)
    assert "<script>" not in page and "\"'>" not in page
    assert page.count("&lt;script&gt;") >= 15
    assert page.count("<form") == 6  # sign-out, verify, revise, retire, revert, forget
