"""The dependency direction is the law (DESIGN section 3, STYLE.md): each layer imports only
what is below it. The domain knows no service or store; the store knows no service or
transport; the service knows no transport; the adapters reach the store only through the
service. Every module of the package belongs to a layer, so a new one must be placed."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "palimpsest"
DOMAIN = {
    "model", "errors", "ids", "views", "secret_rules", "secrets", "gate", "revise", "projects",
    "checks", "text",
}  # fmt: skip
# Each layer (a module or a package, by its top-level name) -> what it may import.
ALLOWED = {
    "errors": set(),
    "model": set(),
    "ids": set(),
    "text": set(),  # a person's text shown on one line
    "views": {"model"},
    "secret_rules": set(),
    "secrets": {"secret_rules"},
    "gate": {"errors", "secrets"},
    "revise": {"model", "errors", "gate"},
    "projects": {"errors"},  # the file binding a directory to a notebook
    "checks": {"model"},  # a check run against files: no store
    "formats": {"model", "errors"},  # files of ours and of other servers, read and written
    "store": {"model", "errors"},
    "embed": {"errors"},  # text to vectors; the store keeps vectors as plain arrays
    "guard": {"model", "errors", "text"},  # reading commands and matching patterns: pure
    "service": DOMAIN | {"store", "embed", "projects", "guard", "formats"},
    "config": {"errors", "gate", "service"},  # the process's configuration, for adapters
    "keychain": {"errors", "secret_rules", "secrets"},  # secrets by name, in the OS keychain
    "mcp": DOMAIN | {"service", "config"},
    "cli": DOMAIN | {"service", "config", "mcp", "hook_guard", "keychain"},
    # The guard's hook must answer before the service could load: it reads the rules
    # through store/guard_rows.py alone, and keeps the command through the service.
    "hook_guard": {"errors", "model", "guard", "projects", "store", "service"},
    "launch": {"hook_guard", "cli"},
    "__init__": {"errors", "service"},
    "__main__": {"launch"},
}


def palimpsest_imports(path: Path) -> set[str]:
    """The top-level palimpsest modules a file imports (relative imports resolved)."""
    module = path.relative_to(PACKAGE).with_suffix("").parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                package = module[: len(module) - node.level]
                parts = [*package, *(node.module.split(".") if node.module else [])]
                found.update([parts[0]] if parts else [alias.name for alias in node.names])
            elif node.module and node.module.startswith("palimpsest."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(
                a.name.split(".")[1] for a in node.names if a.name.startswith("palimpsest.")
            )
    return found


def layer_of(path: Path) -> str:
    return path.relative_to(PACKAGE).with_suffix("").parts[0]


def test_every_module_belongs_to_a_layer() -> None:
    unplaced = {layer_of(path) for path in PACKAGE.rglob("*.py")} - set(ALLOWED)
    assert not unplaced, f"add {sorted(unplaced)} to ALLOWED in {__file__}"


def test_each_layer_imports_only_what_is_below_it() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        layer = layer_of(path)
        reached = palimpsest_imports(path) - {layer} - ALLOWED[layer]
        assert not reached, f"{path.relative_to(PACKAGE)} ({layer}) imports {sorted(reached)}"


def test_the_checker_sees_imports_at_every_depth() -> None:
    """The law is only as good as the import reader: relative imports from a subpackage
    and imports inside functions (the CLI loads the MCP SDK only when serving) count."""
    assert "store" in palimpsest_imports(PACKAGE / "service" / "base.py")
    assert "mcp" in palimpsest_imports(PACKAGE / "cli" / "admin.py")
    assert "service" in palimpsest_imports(PACKAGE / "mcp" / "tools.py")
