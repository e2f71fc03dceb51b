"""The notebooks: each with what it holds; one with the rules that bind it, the commands the
guard denied or asked about there, and its activity day by day (service/overview.py,
service/activity.py). Read only: nothing here changes the memory."""

from __future__ import annotations

import math
from urllib.parse import urlencode

from ...service.admin_answers import SeenShown
from ...service.notebook_answers import (
    ActivityAnswer,
    ActivityDay,
    NotebookListAnswer,
    NotebookListed,
    NotebookRulesAnswer,
    RuleShown,
)
from ..html import Markup, join, tag
from .common import (
    Viewer,
    first_line,
    header_row,
    isolated,
    layout,
    memory_href,
    notebook_href,
    time,
)
from .graphs import activity_chart

SPANS = (30, 90)  # the activity spans offered; the service takes any from 1 to 366
STEPS = 10  # a bar's length is one of this many steps (CSS classes, no style attribute)


def notebooks(viewer: Viewer, answer: NotebookListAnswer) -> Markup:
    listed = answer["notebooks"]
    parts: list[object] = [
        tag("h1", "Notebooks"),
        tag(
            "p",
            f"{len(listed)} notebook{'' if len(listed) == 1 else 's'} in this workspace, "
            "by name. Each opens with its rules, the commands refused there and its "
            "activity.",
            class_="facts",
        ),
    ]
    if not listed:
        parts.append(tag("p", "No notebook yet: the first memory filed into one makes it."))
    else:
        rows = [header_row("Notebook", "Domain", "Summary", "Memories", "Rules", "Projects")]
        rows += [_listed_row(each) for each in listed]
        caption = tag("caption", "The workspace's notebooks, with what each holds now")
        parts.append(tag("div", tag("table", caption, rows), class_="scroll"))
    parts.append(tag("p", answer["projects_note"], class_="facts"))
    return layout("Notebooks", join(parts), viewer)


def _listed_row(each: NotebookListed) -> Markup:
    shown = each["notebook"]
    held = f"{each['active']} active" + (
        f" of {each['memories']}" if each["memories"] != each["active"] else ""
    )
    projects = [tag("li", tag("code", p)) for p in each["projects"]]
    link = tag("a", shown["name"], href=notebook_href(shown["name"], shown["id"]))
    return tag(
        "tr",
        tag("th", link, scope="row"),
        tag("td", shown.get("domain") or ""),
        tag("td", shown.get("summary") or ""),
        tag("td", held),
        tag("td", each["rules"]),
        tag("td", tag("ul", projects, class_="plain") if projects else ""),
    )


def notebook(viewer: Viewer, rules: NotebookRulesAnswer, activity: ActivityAnswer) -> Markup:
    shown = rules["notebook"]
    name = shown["name"]
    facts: list[object] = [tag("code", shown["id"])]
    if shown.get("domain"):
        facts += [" · domain ", isolated(shown["domain"])]
    if shown.get("tags"):
        facts += [" · tags ", isolated(", ".join(shown["tags"]))]
    facts += [" · made ", time(shown.get("created_at"))]
    search = "/?" + urlencode({"notebook": name})
    parts: list[object] = [
        tag("h1", "Notebook ", isolated(name)),
        tag("p", facts, class_="facts"),
        tag("p", shown["summary"], class_="text") if shown.get("summary") else "",
        tag(
            "p",
            tag("a", "Search this notebook", href=search),
            " · ",
            tag("a", "All notebooks", href="/notebooks"),
        ),
        _rules_section(rules),
        _guarded_section(rules["guarded"], rules["guarded_days"]),
        _activity_section(notebook_href(name, shown["id"]), activity),
    ]
    return layout(f"Notebook {name}", join(parts), viewer)


def _rules_section(answer: NotebookRulesAnswer) -> Markup:
    own, wide = answer["rules"], answer["workspace_rules"]
    parts: list[object] = [tag("h2", "Rules", id="rules-h")]
    parts.append(_rule_list(own, "h3") if own else tag("p", "This notebook holds no active rule."))
    if wide:
        parts += [
            tag("h3", "Workspace-wide rules of other notebooks, binding here too"),
            _rule_list(wide, "h4", elsewhere=True),
        ]
    if answer.get("capped"):
        parts.append(
            tag(
                "p",
                "More rules bind here than the newest 200 of each list, shown.",
                class_="notice",
            )
        )
    return tag("section", parts, aria_labelledby="rules-h")


def _rule_list(rules: list[RuleShown], heading: str, elsewhere: bool = False) -> Markup:
    return tag("ul", [tag("li", _rule(r, heading, elsewhere)) for r in rules], class_="rules")


def _rule(rule: RuleShown, heading: str, elsewhere: bool) -> Markup:
    label = rule.get("title") or first_line(rule["text"])
    rows: list[object] = [tag("dt", "kind"), tag("dd", rule["kind"])]
    if elsewhere:
        rows += [tag("dt", "notebook"), tag("dd", rule["notebook"])]
    rows += [
        tag("dt", "severity"),
        tag("dd", (rule.get("severity") or "none given").replace("_", " ")),
        tag("dt", "scope"),
        tag("dd", "the whole workspace" if rule["scope"] == "workspace" else "this notebook"),
        tag("dt", "check"),
        tag("dd", _check(rule)),
        tag("dt", "binds"),
        tag("dd", _binds(rule)),
        tag("dt", "guard"),
        tag("dd", _guard(rule)),
    ]
    return join([
        tag(heading, tag("a", label, href=memory_href(rule["id"]))),
        tag("p", rule["text"], class_="text") if rule.get("title") else "",
        tag("dl", rows, class_="fields"),
    ])  # fmt: skip


def _check(rule: RuleShown) -> Markup | str:
    check = rule.get("check")
    if check is None:
        return "none: a person or an agent keeps it"
    said: list[object] = [check["kind"].replace("_", " ")]
    if check.get("path"):
        said += [" in ", tag("code", check["path"])]
    literals = check.get("literals") or ([check["literal"]] if check.get("literal") else [])
    for n, literal in enumerate(literals):
        said += [": " if n == 0 else ", ", tag("code", literal)]
    return join(said)


def _binds(rule: RuleShown) -> str:
    bindings = rule.get("bindings")
    if bindings is None or bindings["always"]:
        return "always"
    said = []
    if bindings["moments"]:
        said.append(", ".join(m.replace("_", " ") for m in bindings["moments"]))
    if bindings["targets"]:
        said.append("on " + ", ".join(bindings["targets"]))
    return "; ".join(said) or "always"


def _guard(rule: RuleShown) -> str:
    if rule["contested"]:
        return "kept as a note: its check was found too broad, it refuses nothing"
    if rule["guards"]:
        return "refuses the commands its check names, here"
    return "refuses no command here"


def _guarded_section(commands: list[SeenShown], days: int) -> Markup:
    parts: list[object] = [
        tag("h2", "Commands the guard denied or asked about", id="guarded-h"),
        tag(
            "p",
            f"Kept for {days} days, the newest first. Credentials in them were redacted "
            "before they were kept.",
            class_="facts",
        ),
    ]
    if not commands:
        parts.append(tag("p", "None in that time."))
    else:
        rows = [header_row("When", "Decision", "Command", "Session")]
        for seen in commands:
            rows.append(
                tag(
                    "tr",
                    tag("td", _minute(seen["seen_at"])),
                    tag("td", seen["decision"]),
                    tag("td", tag("code", seen["command"])),
                    tag("td", isolated(seen["session"]) if seen.get("session") else "none named"),
                )
            )
        caption = tag("caption", "Commands refused or asked about in this notebook")
        parts.append(tag("div", tag("table", caption, rows), class_="scroll"))
    return tag("section", parts, aria_labelledby="guarded-h")


def _minute(at: str) -> Markup:
    """A time to the minute, on two short lines for a narrow column; exact for machines."""
    day, _, clock = at.partition("T")
    return tag("time", day, " ", clock[:5], " UTC", datetime=at)


def _activity_section(href: str, answer: ActivityAnswer) -> Markup:
    span = answer["days"]
    busy = [day for day in answer["activity"] if day["total"]]
    spans = join([
        " · " if n else "",
        tag("a", f"{days} days", href=f"{href}?days={days}",
            aria_current="page" if days == span else None),
    ] for n, days in enumerate(SPANS))  # fmt: skip
    parts: list[object] = [
        tag("h2", f"Activity, the last {span} days", id="activity-h"),
        tag(
            "p",
            f"{answer['total']} events on {len(busy)} of {span} days (UTC), counted by "
            "operation; days without any are left out. Show ",
            spans,
            ".",
            class_="facts",
        ),
    ]
    if busy:
        most = max(day["total"] for day in busy)
        rows = [header_row("Day", "Events", "By operation")]
        rows += [_day_row(day, most) for day in reversed(busy)]
        caption = tag("caption", "Events per day, the latest first")
        # The picture first, the table with the same facts in words after it.
        parts.append(activity_chart([(day["day"], day["ops"]) for day in answer["activity"]]))
        parts.append(tag("div", tag("table", caption, rows, class_="activity"), class_="scroll"))
    else:
        parts.append(tag("p", "Nothing happened in this notebook in that time."))
    return tag("section", parts, aria_labelledby="activity-h")


def _day_row(day: ActivityDay, most: int) -> Markup:
    step = math.ceil(STEPS * day["total"] / most)
    ops = ", ".join(f"{op} {n}" for op, n in sorted(day["ops"].items()))
    return tag(
        "tr",
        tag("th", time(day["day"]), scope="row"),
        tag(
            "td",
            tag("span", day["total"], class_="count"),
            tag("span", class_=f"bar step-{step}", aria_hidden="true"),
        ),
        tag("td", ops),
    )
