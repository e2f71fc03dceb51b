"""The page's pictures (issue 32): a memory's versions on a time axis, its links as a small
graph, a notebook's activity per day; inline SVG made on the server.

What a person relies on: each mark is one event (or, past forty, a run of them) and links
to its entry in the History list; retire, verify, revert and dispute are told apart by
shape; whatever an agent wrote stays text inside SVG as in HTML; a picture stays small
however long the history or many the links; and on the real page, in a browser, nothing
runs, axe-core finds nothing serious, and the marks and nodes lead where they say.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import httpx2
import pytest
from playwright.sync_api import Browser

from palimpsest.service.answers import EventShown, LinkShown
from palimpsest.web.pages.common import Viewer
from palimpsest.web.pages.graphs import (
    MAX_MARKS,
    MAX_NODES,
    WIDTH,
    activity_chart,
    links_graph,
    version_timeline,
)
from palimpsest.web.pages.memory import memory

from .browser import Visit, accessible, needs_chromium, visit
from .site import ACTOR, Site, session

HOSTILE = "\"'><script>alert(1)</script>&"
HERE = "m_0000000000here000000"


def event(version: int | None, op: str = "revise", at: str | None = "2026-01-01T00:00:00Z",
          actor: str = "agent:a") -> EventShown:  # fmt: skip
    return {"version": version, "op": op, "actor": actor, "at": at}  # type: ignore[typeddict-item]


def link(source: str, target: str, kind: str = "relates_to") -> LinkShown:
    return {"id": "l_1", "source": source, "target": target, "type": kind,
            "created_at": "2026-01-01T00:00:00Z", "actor": "user:ana"}  # fmt: skip


def mark_hrefs(svg: str) -> list[str]:
    return re.findall(r'<a href="(#event-\d+)" class="mark"', svg)


def xs(svg: str) -> list[float]:
    """Each mark's x on the axis (a circle's centre, a polygon's first point's, ...)."""
    found = re.findall(r'class="mark">.*?<(?:circle cx|rect x|polygon points)="([\d.]+)', svg)
    return [float(x) for x in found]


def test_each_event_is_a_mark_linking_to_its_history_entry_its_kind_told_by_shape() -> None:
    ops = ["remember", "revise", "verify", "retire", "reactivate", "revert", "dispute.open",
           "feedback"]  # fmt: skip
    events = [event(n, op, f"2026-01-0{n}T10:00:00Z", actor=HOSTILE)
              for n, op in enumerate(ops, start=1)]  # fmt: skip
    svg = version_timeline(events)
    assert mark_hrefs(svg) == [f"#event-{n}" for n in range(1, 9)]
    assert '<rect x="' in svg and "mark-shape retired" in svg  # a square
    for kind in ("verified", "reverted", "disputed"):
        assert re.search(rf'<polygon points="[^"]+" class="mark-shape {kind}"', svg), kind
    assert svg.count('<circle cx="') >= 3  # changes and the usefulness mark: round
    # The actor and the time in each mark's title, escaped: an agent wrote the actor.
    assert "<script>" not in svg and "\"'>" not in svg
    assert "Version 4: retire by &quot;&#x27;&gt;&lt;script&gt;" in svg
    assert "at 2026-01-04T10:00:00Z</title>" in svg
    assert svg.startswith("<svg ") and 'role="group"' in svg and "<title>Timeline of 8" in svg
    legend = svg[svg.index('<g class="legend">') :]
    assert len(re.findall(r"<text", legend)) == 6  # each shape in use, said in words
    words = re.findall(r'<text x="([\d.]+)" y="[\d.]+">([^<]+)<', legend)
    assert all(float(x) + 9 * len(word) <= WIDTH for x, word in words)  # in rows that fit


def test_one_event_is_one_mark_within_the_axis() -> None:
    svg = version_timeline([event(1, "remember")])
    assert mark_hrefs(svg) == ["#event-1"]
    assert 0 < xs(svg)[0] < WIDTH
    assert version_timeline([]) == ""


def test_events_of_the_same_second_stand_side_by_side_in_order() -> None:
    svg = version_timeline([event(n) for n in range(1, 6)])  # all at one time
    positions = xs(svg)
    assert len(positions) == 5 and positions == sorted(positions)
    assert min(b - a for a, b in itertools.pairwise(positions)) >= 10


def test_events_without_a_time_keep_their_place() -> None:
    events = [event(1, at="2026-01-01T00:00:00Z"), event(2, at=None), event(3, at="garbage"),
              event(4, at="2026-02-01T00:00:00Z")]  # fmt: skip
    svg = version_timeline(events)
    positions = xs(svg)
    assert mark_hrefs(svg) == ["#event-1", "#event-2", "#event-3", "#event-4"]
    assert positions == sorted(positions) and len(set(positions)) == 4
    assert "at ?</title>" in svg  # said unknown, not made up


def test_five_hundred_events_make_a_bounded_timeline_that_still_covers_them_all() -> None:
    times = [f"2026-01-{1 + n // 20:02d}T{n % 20:02d}:00:00Z" for n in range(1, 501)]
    events = [event(n, "retire" if n == 250 else "revise", at) for n, at in enumerate(times, 1)]
    svg = version_timeline(events)
    hrefs = mark_hrefs(svg)
    assert len(hrefs) <= MAX_MARKS and len(svg) < 16_000
    assert hrefs[0] == "#event-1"
    covered = [int(n) for n in re.findall(r"<title>(\d+) events", svg)]
    assert sum(covered) == 500  # every event is in a mark: none silently left out
    assert "mark-shape retired" in svg  # a run holding a retirement takes its shape
    assert all(0 < x < WIDTH for x in xs(svg))


def test_the_links_graph_draws_each_neighbour_as_a_link_with_a_labelled_directed_edge() -> None:
    links = [link(HERE, "m_00000000000000000out", "depends_on"),
             link("m_000000000000000000in", HERE, "supersedes"),
             link(HERE, HOSTILE, HOSTILE)]  # fmt: skip
    svg = links_graph(HERE, links)
    assert '<marker id="links-arrow"' in svg  # the arrowhead, inside the same SVG
    assert 'href="/memories/m_00000000000000000out"' in svg
    assert 'href="/memories/m_000000000000000000in"' in svg
    assert re.search(r'marker-end="url\(#links-arrow\)"[^>]*></line><text[^>]*>depends_on', svg)
    assert re.search(r'marker-start="url\(#links-arrow\)"[^>]*></line><text[^>]*>supersedes', svg)
    assert "<title>this memory depends_on m_00000000000000000out</title>" in svg
    assert "<title>m_000000000000000000in supersedes this memory</title>" in svg
    # An end that is not a memory's id is drawn, escaped, and leads nowhere.
    assert "<script>" not in svg and "\"'>" not in svg
    assert svg.count("<a ") == 2 and "&lt;script&gt;" in svg
    assert links_graph(HERE, []) == ""


def test_a_hundred_links_draw_twelve_memories_and_say_how_many_more() -> None:
    links = [link(HERE, f"m_{n:020d}") for n in range(100)]
    svg = links_graph(HERE, links)
    assert svg.count('<a href="/memories/') == MAX_NODES
    assert "and 88 more, in the table below" in svg
    assert len(svg) < 8_000


def test_the_activity_chart_draws_a_bar_a_day_stacked_by_operation() -> None:
    days = [("2026-03-01", 3), ("2026-03-03", {"revise": 2, HOSTILE: 1}), ("not a day", 9)]
    svg = activity_chart(days)  # type: ignore[arg-type]
    titles = re.findall(r"<g><title>([^<]*)</title>", svg)
    assert titles[0] == "2026-03-01: 3 events"
    assert titles[1] == "2026-03-02: 0 events"  # a quiet day keeps its place
    assert titles[2].startswith("2026-03-03: 3 events (") and "2 revise" in titles[2]
    assert len(titles) == 3  # what is not a day is left out
    assert svg.count('class="bar series-') == 3 + 2  # the bars' pieces and the legend's
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    assert 'role="img"' in svg and "<title>Activity from 2026-03-01 to 2026-03-03" in svg
    assert activity_chart([]) == ""


def test_a_year_of_activity_is_at_most_sixty_bars() -> None:
    days = [(f"2025-{m:02d}-{d:02d}", {"revise": d, "remember": 1})
            for m in range(1, 13) for d in range(1, 29)]  # fmt: skip
    svg = activity_chart(days)
    bars = re.findall(r"<g><title>([^<]*)</title>", svg)
    assert len(bars) <= 60 and len(svg) < 16_000
    assert bars[0].startswith("2025-01-01 to 2025-01-07: ")
    assert sum(int(re.search(r": (\d+) events", b)[1]) for b in bars) == 12 * (406 + 28)  # type: ignore[index]


def test_days_ten_thousand_years_apart_are_still_sixty_bars_holding_every_count() -> None:
    svg = activity_chart([("0001-01-01", 2), ("9999-12-31", {"revise": 3})])
    bars = re.findall(r"<g><title>([^<]*)</title>", svg)
    assert len(bars) <= 60 and len(svg) < 16_000
    assert bars[0].endswith(": 2 events") and bars[-1].endswith(": 3 events (3 revise)")


@pytest.mark.parametrize("count", [1, 2, 41, 200])
def test_a_timeline_has_a_mark_for_each_run_and_no_run_is_empty(count: int) -> None:
    svg = version_timeline([event(n, at=f"2026-01-01T00:{n % 60:02d}:00Z")
                            for n in range(1, count + 1)])  # fmt: skip
    numbers = [int(h.removeprefix("#event-")) for h in mark_hrefs(svg)]
    assert numbers[0] == 1 and numbers == sorted(set(numbers)) and numbers[-1] <= count


def test_the_memory_page_gives_history_entries_the_ids_its_marks_link_to() -> None:
    shown = {"id": HERE, "text": "t", "kind": "fact", "status": "active"}
    events = [event(1, "remember"), event(2, "revise")]
    viewer = Viewer("user:ana", "viewer", "default", "x")
    page = memory(viewer, {"memory": shown, "links": [link(HERE, "m_1")]}, events)  # type: ignore[typeddict-item]
    history = page[page.index('id="history-h"') :]
    assert mark_hrefs(history) == ["#event-1", "#event-2"]
    assert '<li id="event-1">' in history and '<li id="event-2">' in history
    links = page[page.index('id="links-h"') : page.index('id="history-h"')]
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in links and "<table>" in links


@needs_chromium
def test_the_memory_page_shows_both_pictures_whose_parts_lead_where_they_say(
    browser: Browser, site: Site, screens: Path, visits: list[Visit]
) -> None:
    editor = visit(visits, browser, site)
    editor.sign_in(site.editor_key)
    page = editor.page
    page.goto(f"/memories/{site.memory_id}")
    timeline = page.locator("svg.timeline-chart")
    entries = page.locator("ol.timeline > li")
    assert timeline.locator("a").count() == entries.count() >= 2  # one mark an event
    graph = page.locator("svg.links-chart")
    neighbour = graph.locator(f'a[href="/memories/{site.anas_memory_id}"]')
    assert neighbour.count() == 1
    assert graph.locator("line[marker-end]").count() == graph.locator("line[marker-start]").count()
    # The actor, markup and all, is in a mark's title as text; nothing it holds ran.
    assert ACTOR in timeline.locator("a title").first.text_content()  # type: ignore[operator]
    assert editor.pwned() is None
    accessible(page)
    page.screenshot(path=screens / "memory-pictures.png", full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert timeline.bounding_box()["width"] <= 390  # type: ignore[index]
    page.screenshot(path=screens / "memory-pictures-phone.png", full_page=True)

    timeline.locator("a").nth(1).click()  # the second mark: the revision
    assert page.evaluate("location.hash") == "#event-2"
    assert page.locator("li:target h3").inner_text().startswith("Version 2: revise")
    neighbour.click()
    page.get_by_role("heading", name="History").wait_for()
    assert page.url.endswith(f"/memories/{site.anas_memory_id}")
    assert editor.pwned() is None


def test_the_pictures_keep_a_page_of_two_hundred_versions_light(site: Site) -> None:
    service = site.service()
    try:
        made = service.remember(notebook="ops", kind="note", text="Counted 0 times")
        for n in range(1, 200):
            service.revise(id=made["id"], text=f"Counted {n} times")
    finally:
        service.close()
    page = httpx2.get(f"{site.base}/memories/{made['id']}", timeout=60,
                      headers={"Cookie": session(site, site.viewer_key)}).text  # fmt: skip
    pictures = re.findall(r"<svg .*?</svg>", page, flags=re.S)
    assert len(pictures) == 1 and page.count('<li id="event-') == 200
    assert len(pictures[0].encode()) < 16_000  # the list below is the long part, not this
    assert len(pictures[0]) < len(page) / 10
