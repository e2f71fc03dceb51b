"""Pictures of what a page also lists: a memory's versions on a time axis, its links as a
small graph, a notebook's activity per day.

Pure functions, one answer of the service in, inline SVG out. Each is built with `tag`,
so whatever an agent wrote (an actor, an id) is escaped inside SVG text and titles as it is
in HTML; geometry goes in SVG attributes and colour in site.css classes, since the CSP
forbids inline script and style. Each picture is bounded in size however long its answer
(many events share a mark, many links an "and N more"), and each stands beside the list
or table that gives the same facts as text.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta

from ...service.answers import EventShown, LinkShown
from ..html import Markup, join, tag
from .common import memory_href

WIDTH = 480  # the viewBox's width: the picture scales to its column, a phone's included
EDGE = 16  # room kept free at the left and right of a picture


def history_anchor(position: int) -> str:
    """The element id of the `position`-th entry (from 1) of a memory's History list."""
    return f"event-{position}"


def _svg(title: str, height: int, kind: str, *children: object, role: str = "img") -> Markup:
    return tag(
        "svg",
        tag("title", title),
        *children,
        xmlns="http://www.w3.org/2000/svg",
        viewBox=f"0 0 {WIDTH} {height}",
        role=role,
        class_=f"chart {kind}",
    )


def _n(value: float) -> str:
    """A coordinate, short: each is repeated for every mark, so bytes count."""
    return f"{value:.1f}".rstrip("0").rstrip(".")


# -- the version timeline ---------------------------------------------------------------

# What kind of step an event's operation is, each drawn as its own shape.
KINDS = {
    "retire": "retired",
    "forget": "retired",
    "forget_version": "retired",
    "verify": "verified",
    "revert": "reverted",
    "feedback": "marked",
}
# When several events share a mark, it takes the shape of the weightiest among them.
WEIGHT = ("retired", "reverted", "disputed", "verified", "changed", "marked")
MAX_MARKS = 40
GAP = 11.0  # the least distance between two marks' centres
LABEL_GAP = 52.0  # ... and between two version numbers under them ("v120–132", on a phone)
AXIS_Y = 28


def _kind(op: object) -> str:
    name = str(op or "")
    if name.startswith("dispute"):
        return "disputed"
    return KINDS.get(name, "changed")


def _shape(kind: str, x: float, y: float) -> Markup:
    """A mark's shape, told apart by its outline, not by its colour alone."""
    c = f"mark-shape {kind}"
    if kind == "retired":  # a square
        return tag("rect", x=_n(x - 4.5), y=_n(y - 4.5), width="9", height="9", class_=c)
    points = {
        "verified": ((0, -6), (5.5, 4), (-5.5, 4)),  # a triangle, point up
        "disputed": ((0, 6), (5.5, -4), (-5.5, -4)),  # a triangle, point down
        "reverted": ((0, -6), (6, 0), (0, 6), (-6, 0)),  # a diamond
    }.get(kind)
    if points:
        joined = " ".join(f"{_n(x + dx)},{_n(y + dy)}" for dx, dy in points)
        return tag("polygon", points=joined, class_=c)
    return tag("circle", cx=_n(x), cy=_n(y), r="3.5" if kind == "marked" else "5", class_=c)


def _parse_time(at: object) -> float | None:
    if not isinstance(at, str):
        return None
    try:
        return datetime.fromisoformat(at).timestamp()
    except (ValueError, OverflowError, OSError):  # OSError: a year the platform cannot place
        return None


def _chunks(count: int) -> list[range]:
    """The positions (from 0) each mark stands for: one each, or runs of neighbours."""
    size = max(1, math.ceil(count / MAX_MARKS))
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def _spread(wanted: list[float | None], left: float, right: float) -> list[float]:
    """Each mark's x: where its time puts it, nudged so that no two overlap (events of the
    same second side by side, in their order); a mark with no time follows the one before."""
    count = len(wanted)
    known = [w for w in wanted if w is not None]
    low, high = (min(known), max(known)) if known else (0.0, 0.0)
    if high <= low:  # no times, or all the same: evenly, in order
        xs = [left + (right - left) * (i / (count - 1) if count > 1 else 0.5) for i in range(count)]
        return xs
    gap = min(GAP, (right - left) / max(count - 1, 1))
    xs, previous = [], left
    for w in wanted:
        x = previous if w is None else left + (right - left) * (w - low) / (high - low)
        previous = max(x, xs[-1] + gap) if xs else x
        xs.append(previous)
    for i in range(count - 1, -1, -1):  # pulled back within the axis, keeping the gaps
        limit = right if i == count - 1 else xs[i + 1] - gap
        xs[i] = min(xs[i], limit)
    return xs


def _versions(events: Sequence[EventShown]) -> str:
    numbers = [e.get("version") for e in events if e.get("version") is not None]
    if not numbers:
        return ""
    first, last = numbers[0], numbers[-1]
    return f"v{first}" if first == last else f"v{first}–{last}"


def _mark_title(events: Sequence[EventShown]) -> str:
    """What a mark stands for, as its tooltip and accessible name: versions, operations,
    actors and times."""
    if len(events) == 1:
        event = events[0]
        version = event.get("version")
        what = f"Version {version}: " if version is not None else ""
        return f"{what}{event.get('op')} by {event.get('actor')} at {event.get('at') or '?'}"
    ops = Counter(str(e.get("op")) for e in events)
    actors = list(dict.fromkeys(str(e.get("actor")) for e in events))
    by = ", ".join(actors[:3]) + (f" and {len(actors) - 3} more" if len(actors) > 3 else "")
    versions = _versions(events)
    return (
        f"{len(events)} events{' (' + versions + ')' if versions else ''}: "
        + ", ".join(f"{n} {op}" for op, n in ops.most_common())
        + f"; by {by}; from {events[0].get('at') or '?'} to {events[-1].get('at') or '?'}"
    )


LEGEND = {
    "changed": "changed",
    "retired": "retired",
    "verified": "verified",
    "reverted": "reverted",
    "disputed": "dispute",
    "marked": "usefulness mark",
}


def _legend(kinds: set[str], y: float) -> tuple[Markup, float]:
    """The shapes in use and what each means, in rows; and how far down the rows reach."""
    items, x = [], EDGE + 6.0
    for kind in (k for k in WEIGHT if k in kinds):
        room = 22 + 9 * len(LEGEND[kind])  # wide enough for a phone's larger letters
        if x + room > WIDTH and x > EDGE + 6:
            x, y = EDGE + 6.0, y + 18
        items += [_shape(kind, x, y), tag("text", LEGEND[kind], x=_n(x + 9), y=_n(y + 4))]
        x += room
    return tag("g", items, class_="legend"), y


def version_timeline(events: Sequence[EventShown]) -> Markup:
    """The memory's events, oldest first, on a time axis; each mark a link to its entry
    in the History list (`history_anchor`)."""
    if not events:
        return Markup("")
    chunks = _chunks(len(events))
    groups = [[events[i] for i in chunk] for chunk in chunks]
    times = [_parse_time(group[0].get("at")) for group in groups]
    xs = _spread(times, EDGE + 6, WIDTH - EDGE - 6)
    marks, labels, kinds, last_label = [], [], set(), -LABEL_GAP
    for chunk, group, x in zip(chunks, groups, xs, strict=True):
        kind = min((_kind(e.get("op")) for e in group), key=WEIGHT.index)
        kinds.add(kind)
        mark = tag("a", tag("title", _mark_title(group)), _shape(kind, x, AXIS_Y),
                   href="#" + history_anchor(chunk[0] + 1), class_="mark")  # fmt: skip
        marks.append(mark)
        number = _versions(group)
        if number and x - last_label >= LABEL_GAP:
            labels.append(tag("text", number, x=_n(x), y=_n(AXIS_Y + 20)))
            last_label = x
    known = [str(e.get("at")) for e in events if _parse_time(e.get("at")) is not None]
    places = ((EDGE, "start"), (WIDTH - EDGE, "end"))
    ends = [
        tag("text", at, x=x, y="68", class_=side)
        for at, (x, side) in zip(_axis_ends(known), places, strict=False)  # one or two
    ]
    axis = tag("line", x1=EDGE, y1=AXIS_Y, x2=WIDTH - EDGE, y2=AXIS_Y, class_="axis")
    title = (
        f"Timeline of {len(events)} events"
        + (f", {_versions(events)}" if _versions(events) else "")
        + (f", from {known[0]} to {known[-1]}" if known else "")
        + ("" if len(groups) == len(events) else f"; each mark stands for up to {len(chunks[0])}")
        + ". Each mark links to its entry in the History list."
    )
    legend, bottom = _legend(kinds, 86)
    return _svg(
        title,
        int(bottom) + 14,
        "timeline-chart",
        axis,
        tag("g", marks, class_="marks"),
        tag("g", labels, ends, class_="labels"),
        legend,
        role="group",
    )


def _axis_ends(known: list[str]) -> list[str]:
    """The first and last time, to the minute (to the second if that tells them apart;
    one alone if not): the axis's ends, read at a glance."""
    if not known:
        return []
    for width in (16, 19):
        first, last = (at[:width].replace("T", " ") for at in (known[0], known[-1]))
        if first != last:
            return [first, last]
    return [first]


# -- a memory's links -------------------------------------------------------------------

MAX_NODES = 12
ORBIT = (150.0, 115.0)  # the ellipse the other memories sit on
HERE_R, NODE_R = 14.0, 8.0
ARROW = "links-arrow"  # the arrowhead marker's id: one links graph per page
Point = tuple[float, float]


def _neighbours(here: str, links: Sequence[LinkShown]) -> dict[str, list[tuple[str, bool]]]:
    """Each other end, in order of first mention: its links' types, and whether each goes
    from this memory to it."""
    found: dict[str, list[tuple[str, bool]]] = {}
    for link in links:
        source, target = link.get("source"), link.get("target")
        if source == here and target != here:
            found.setdefault(str(target), []).append((str(link.get("type")), True))
        elif target == here and source != here:
            found.setdefault(str(source), []).append((str(link.get("type")), False))
    return found


def _short_id(memory_id: str) -> str:
    """An id's last characters: its random part, which tells memories apart."""
    return memory_id if len(memory_id) <= 9 else "…" + memory_id[-6:]


def _edge_words(other: str, ends: list[tuple[str, bool]]) -> str:
    said = [f"this memory {kind} {other}" if out else f"{other} {kind} this memory"
            for kind, out in ends]  # fmt: skip
    return "; ".join(said)


def _node(
    other: str, ends: list[tuple[str, bool]], angle: float, centre: Point, at: float
) -> Markup:
    """The edge to another memory, its label `at` that fraction of the way, and the node."""
    cx, cy = centre
    ux, uy = math.cos(angle), math.sin(angle)
    x, y = cx + ORBIT[0] * ux, cy + ORBIT[1] * uy
    outgoing, incoming = any(out for _, out in ends), any(not out for _, out in ends)
    # The edge runs between the two circles' rims, so its arrowheads touch them.
    length = math.hypot(x - cx, y - cy)
    dx, dy = (x - cx) / length, (y - cy) / length
    edge = tag(
        "line",
        x1=_n(cx + dx * HERE_R), y1=_n(cy + dy * HERE_R),
        x2=_n(x - dx * NODE_R), y2=_n(y - dy * NODE_R),
        marker_end=f"url(#{ARROW})" if outgoing else None,
        marker_start=f"url(#{ARROW})" if incoming else None,
        class_="edge",
    )  # fmt: skip
    types = ", ".join(dict.fromkeys(kind for kind, _ in ends))
    lift = -6 if abs(uy) < 0.3 else 3  # above a level edge, across a steep one
    label = tag(
        "text",
        types if len(types) <= 28 else types[:27] + "…",
        x=_n(cx + (x - cx) * at),
        y=_n(cy + (y - cy) * at + lift),
        class_="edge-label",
    )
    anchor = "middle" if abs(ux) < 0.3 else ("start" if ux > 0 else "end")
    name = tag("text", _short_id(other), x=_n(x + ux * (NODE_R + 4)),
               y=_n(y + uy * (NODE_R + 8) + 4), text_anchor=anchor)  # fmt: skip
    node = join([tag("title", _edge_words(other, ends)), tag("circle", cx=_n(x), cy=_n(y),
                 r=_n(NODE_R), class_="node"), name])  # fmt: skip
    if other.startswith("m_"):
        node = tag("a", node, href=memory_href(other), class_="other")
    else:
        node = tag("g", node, class_="other")
    return join([edge, label, node])


def links_graph(memory_id: str, links: Sequence[LinkShown]) -> Markup:
    """This memory in the centre and the memories it links to or from around it, each a
    link to its page; an edge's arrow points from a link's source to its target."""
    neighbours = _neighbours(memory_id, links)
    if not neighbours:
        return Markup("")
    shown = list(neighbours.items())[:MAX_NODES]
    more = len(neighbours) - len(shown)
    # One or two others sit level with this memory, in a short picture; more go round it.
    level = len(shown) <= 2
    height, start = (100, 0.0) if level else (330, -math.pi / 2)
    cx, cy = centre = (WIDTH / 2, 36.0 if level else 155.0)
    step = 2 * math.pi / len(shown)
    # Neighbouring edges' labels at two distances, so that they do not run into each other.
    spots = [0.58 if len(shown) <= 4 else (0.72 if i % 2 else 0.46) for i in range(len(shown))]
    parts = [
        _node(other, ends, start + step * i, centre, spots[i])
        for i, (other, ends) in enumerate(shown)
    ]
    arrowhead = tag("path", d="M0,0L10,5L0,10z", class_="arrowhead")
    marker = tag("marker", arrowhead, id=ARROW, viewBox="0 0 10 10", refX="10", refY="5",
                 markerWidth="7", markerHeight="7", orient="auto-start-reverse")  # fmt: skip
    # Named in a key at the foot, not beside the centre, where the edges' labels are.
    key = EDGE + 6.0, height - 14.0
    here = join([tag("circle", cx=_n(cx), cy=_n(cy), r=_n(HERE_R), class_="here"),
                 tag("circle", cx=_n(key[0]), cy=_n(key[1]), r="6", class_="here"),
                 tag("text", "this memory", x=_n(key[0] + 10), y=_n(key[1] + 4),
                     class_="here-label")])  # fmt: skip
    rest = (tag("text", f"and {more} more, in the table below", x=WIDTH - EDGE,
                y=height - 10, class_="more end") if more else "")  # fmt: skip
    count = len(links)
    title = (
        f"Links of this memory: {count} link{'s' if count != 1 else ''} with "
        f"{len(neighbours)} other memor{'ies' if len(neighbours) != 1 else 'y'}"
        + (f", {len(shown)} drawn" if more else "")
        + "; an arrow points from a link's source to its target."
    )
    return _svg(title, height, "links-chart", tag("defs", marker),
                tag("g", parts, class_="graph"), here, rest, role="group")  # fmt: skip


# -- a notebook's activity --------------------------------------------------------------

MAX_BARS = 60
SERIES = 6  # colours in site.css, reused in turn past that many operations
PLOT_TOP, PLOT_BOTTOM = 14.0, 120.0
Day = tuple[str, int | Mapping[str, int]]


def _counts(value: object) -> dict[str, int]:
    """A day's counts by operation; a bare count is under no operation's name."""
    pairs = value.items() if isinstance(value, Mapping) else [("", value)]
    return {str(op): n for op, n in pairs if type(n) is int and n > 0}  # not bool, not 0


def _days(days: Sequence[Day]) -> dict[date, Counter[str]]:
    """Each day's counts by operation; a day that is not `YYYY-MM-DD` is left out."""
    found: dict[date, Counter[str]] = {}
    for day, counts in days:
        try:
            when = date.fromisoformat(str(day))
        except ValueError:
            continue
        found.setdefault(when, Counter()).update(_counts(counts))
    return found


def _bar_words(start: date, end: date, counts: Counter[str]) -> str:
    when = start.isoformat() if start == end else f"{start.isoformat()} to {end.isoformat()}"
    total = sum(counts.values())
    split = ", ".join(f"{n} {op}" for op, n in sorted(counts.items()) if op)
    return f"{when}: {total} event{'s' if total != 1 else ''}" + (f" ({split})" if split else "")


def activity_chart(days: Sequence[Day]) -> Markup:
    """Bars of events per day, each stacked by operation when the counts say which: days
    as `("YYYY-MM-DD", count)` or `("YYYY-MM-DD", {op: count})`. Days with nothing between
    the first and the last are drawn empty; a long span puts several days in a bar."""
    found = _days(days)
    if not found:
        return Markup("")
    first, last = min(found), max(found)
    span = (last - first).days + 1
    per = math.ceil(span / MAX_BARS)  # days a bar stands for
    bars = [
        (begin, begin + timedelta(days=min(per - 1, (last - begin).days)), Counter[str]())
        for begin in (first + timedelta(days=start) for start in range(0, span, per))
    ]
    for day, counts in found.items():  # each day into its bar: no walk over empty days
        bars[(day - first).days // per][2].update(counts)
    ops = sorted({op for _, _, c in bars for op in c})
    series = {op: f"series-{i % SERIES}" for i, op in enumerate(ops)}
    top = max(sum(c.values()) for _, _, c in bars) or 1
    width = (WIDTH - 2 * EDGE - 24) / len(bars)
    scale = (PLOT_BOTTOM - PLOT_TOP) / top
    drawn = []
    for i, (begin, end, counts) in enumerate(bars):
        x, y = EDGE + 24 + i * width, PLOT_BOTTOM
        pieces = []
        for op in ops:  # stacked from the bottom, in the legend's order
            height = counts.get(op, 0) * scale
            if height:
                y -= height
                pieces.append(tag("rect", x=_n(x + 0.5), y=_n(y), width=_n(max(width - 1, 0.5)),
                                  height=_n(height), class_=f"bar {series[op]}"))  # fmt: skip
        drawn.append(tag("g", tag("title", _bar_words(begin, end, counts)), pieces))
    total = sum(sum(c.values()) for _, _, c in bars)
    busiest = max(bars, key=lambda bar: sum(bar[2].values()))
    title = (
        f"Activity from {first.isoformat()} to {last.isoformat()}"
        + (f", {per} days a bar" if per > 1 else "")
        + f": {total} events in all; the most, {_bar_words(*busiest)}."
    )
    axes = [
        tag("line", x1=EDGE + 22, y1=_n(PLOT_BOTTOM), x2=WIDTH - EDGE, y2=_n(PLOT_BOTTOM),
            class_="axis"),
        tag("text", str(top), x=EDGE + 18, y=_n(PLOT_TOP + 4), text_anchor="end"),
        tag("text", "0", x=EDGE + 18, y=_n(PLOT_BOTTOM), text_anchor="end"),
        tag("text", first.isoformat(), x=EDGE + 24, y=_n(PLOT_BOTTOM + 16)),
        tag("text", last.isoformat(), x=WIDTH - EDGE, y=_n(PLOT_BOTTOM + 16), class_="end"),
    ]  # fmt: skip
    legend, x = [], EDGE + 24.0
    for op in (op for op in ops if op):
        if x + 14 + 9 * len(op) > WIDTH:  # no room left: the bars' titles still name it
            break
        legend += [tag("rect", x=_n(x), y=_n(PLOT_BOTTOM + 26), width="10", height="10",
                       class_=f"bar {series[op]}"),
                   tag("text", op, x=_n(x + 14), y=_n(PLOT_BOTTOM + 35))]  # fmt: skip
        x += 22 + 9 * len(op)  # wide enough for a phone's larger letters
    return _svg(title, int(PLOT_BOTTOM + 44), "activity-chart", tag("g", drawn, class_="bars"),
                tag("g", axes, class_="labels"), tag("g", legend, class_="legend"))  # fmt: skip
