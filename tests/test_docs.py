"""The documentation a user reads stays inside the repository and covers the whole product.

A clone must be readable on its own: every link of README.md and docs/ leads to a file of
the repository (or a public web page), and each anchor to a heading that exists. Every
CLI command and every MCP tool is documented in docs/operations.md, every top-level command
has a row in the README's command table (and no row names a command that does not exist),
and every kind, status and link type is in docs/concepts.md, so that adding one without its
documentation fails here.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import click
import pytest

from palimpsest.cli import palimpsest
from palimpsest.config import KEYS
from palimpsest.domain.errors import PalimpsestError
from palimpsest.domain.model import KINDS, LINK_TYPES, STATUSES
from palimpsest.mcp import TOOL_NAMES

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
INLINE_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
LOCAL_HOSTS = {"localhost", "127.0.0.1", "0.0.0.0", "::1", "[::1]"}


def _prose(page: Path) -> str:
    """A page without its fenced code blocks, where `](` is code rather than a link."""
    return FENCE.sub("", page.read_text(encoding="utf-8"))


def _links(page: Path) -> list[str]:
    text = _prose(page)
    return INLINE_LINK.findall(text) + REFERENCE_LINK.findall(text)


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped."""
    found = set()
    for line in _prose(page).splitlines():
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            words = re.sub(r"[^\w\- ]", "", heading[1].lower())
            found.add(words.replace(" ", "-"))
    return found


def _problem(page: Path, link: str) -> str | None:
    """What is wrong with `link` on `page`, or None when it leads somewhere in reach."""
    parts = urlsplit(link)
    if parts.scheme in ("http", "https"):
        host = (parts.hostname or "").lower()
        if not host or host in LOCAL_HOSTS or "." not in host:
            return "a URL that only works on the author's machine"
        return None
    if parts.scheme:
        return f"a {parts.scheme}: link, which a reader of the repository cannot follow"
    target = (page.parent / parts.path).resolve() if parts.path else page
    if not target.is_relative_to(REPO):
        return "a path that leaves the repository"
    if not target.exists():
        return "a path that does not exist"
    if parts.fragment and target.suffix == ".md" and parts.fragment not in _anchors(target):
        return f"an anchor #{parts.fragment} that no heading of {target.name} has"
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_stays_inside_the_repository(page: Path) -> None:
    broken = {link: _problem(page, link) for link in _links(page)}
    assert {link: why for link, why in broken.items() if why} == {}


def test_the_link_check_sees_what_it_must_refuse() -> None:
    page = REPO / "README.md"
    assert _problem(page, "../shared/DESIGN.md") == "a path that leaves the repository"
    assert _problem(page, "docs/nowhere.md") == "a path that does not exist"
    assert _problem(page, "http://127.0.0.1:8765/mcp") is not None
    assert _problem(page, "docs/operations.md#no-such-heading") is not None
    assert _problem(page, "https://modelcontextprotocol.io/") is None
    assert _links(page), "README.md has links: the pattern must find them"


def test_the_readme_points_to_the_docs() -> None:
    links = {urlsplit(link).path for link in _links(REPO / "README.md")}
    assert {"docs/concepts.md", "docs/operations.md", "docs/configuration.md"} <= links
    assert {"docs/README.md", "docs/benchmarks.md", "docs/team.md"} <= links


def test_the_docs_say_what_to_read_first() -> None:
    """docs/README.md links every page of docs/, so none is found only by chance."""
    links = {urlsplit(link).path for link in _links(DOCS / "README.md")}
    pages = {page.name for page in DOCS.glob("*.md")} - {"README.md"}
    assert sorted(pages - links) == []


def test_the_readme_opens_with_the_two_commands_and_stays_short() -> None:
    """Its first screen sets up and runs; the rest fits three screens, details in docs/."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first_screen = readme.split("\n---\n")[0]
    assert "./scripts/run " in first_screen and "./scripts/test " in first_screen
    assert len(readme.splitlines()) <= 170, "move the details into docs/"


def _table_rows(text: str) -> list[str]:
    """The first cell of each row of the first table in `text`, when it is `code`."""
    return re.findall(r"^\| `([^`]+)` \|", text, re.MULTILINE)


def test_the_readmes_command_table_matches_the_cli() -> None:
    """One row per top-level command of `palimpsest --help`, and no row for a command that
    does not exist (a renamed or removed one)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    rows = _table_rows(section)
    commands = set(palimpsest.commands)
    assert {
        "commands without a row": sorted(commands - set(rows)),
        "rows naming no command": sorted(set(rows) - commands),
        "rows given twice": sorted({row for row in rows if rows.count(row) > 1}),
    } == {"commands without a row": [], "rows naming no command": [], "rows given twice": []}


@pytest.mark.parametrize("command", sorted(palimpsest.commands))
def test_every_command_is_in_the_operations_table(command: str) -> None:
    """The table that opens docs/operations.md, where a reader looks first."""
    text = (DOCS / "operations.md").read_text(encoding="utf-8")
    table = text.split("\n## ", 1)[0]
    assert re.search(rf"`palimpsest {command}\b", table), f"no row names palimpsest {command}"


def _commands(group: click.Group, prefix: str = "") -> list[str]:
    """Every command of the CLI, subcommands as `notebook create`."""
    names = []
    for name, command in sorted(group.commands.items()):
        names.append(prefix + name)
        if isinstance(command, click.Group):
            names += _commands(command, f"{prefix}{name} ")
    return names


@pytest.mark.parametrize("command", _commands(palimpsest))
def test_every_cli_command_is_documented(command: str) -> None:
    assert f"palimpsest {command}" in (DOCS / "operations.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("tool", TOOL_NAMES)
def test_every_mcp_tool_is_documented(tool: str) -> None:
    operations = (DOCS / "operations.md").read_text(encoding="utf-8")
    assert f"`{tool}`" in operations
    assert re.search(rf"^## {tool}\b", operations, re.MULTILINE), f"no section for {tool}"


@pytest.mark.parametrize(
    "name",
    [*KINDS, *STATUSES, *LINK_TYPES],
)
def test_every_kind_status_and_link_type_is_explained(name: str) -> None:
    concepts = (DOCS / "concepts.md").read_text(encoding="utf-8")
    assert re.search(rf"^\| `{name}` \|", concepts, re.MULTILINE), f"no table row for {name}"


def test_every_error_class_is_explained() -> None:
    operations = (DOCS / "operations.md").read_text(encoding="utf-8")
    classes = {cls.error_class for cls in PalimpsestError.__subclasses__()}
    for error_class in classes:
        assert f"| `{error_class}` |" in operations


def test_every_setting_is_in_the_configuration_table() -> None:
    page = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert [key for key in KEYS if f"| `{key}` |" not in page] == []
