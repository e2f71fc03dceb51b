"""The dependency direction is the law: the store and the model never reach upwards."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "palimpsest"
ALLOWED = {
    "model": set(),
    "errors": set(),
    "store": {"model", "errors", "store"},
    "revise": {"model", "errors", "gate"},
    "gate": {"errors", "secrets"},
    "secrets": {"secret_rules"},
    "secret_rules": set(),
}


def palimpsest_imports(path: Path) -> set[str]:
    """The top-level palimpsest modules a file imports (relative imports resolved)."""
    module = path.relative_to(PACKAGE).with_suffix("").parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(module[: len(module) - node.level])
                parts = base + (node.module.split(".") if node.module else [])
                names = [parts[0]] if parts else [alias.name for alias in node.names]
                found.update(names)
            elif node.module and node.module.startswith("palimpsest."):
                found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(
                a.name.split(".")[1] for a in node.names if a.name.startswith("palimpsest.")
            )
    return found


def test_lower_layers_import_only_what_is_below_them() -> None:
    for layer, allowed in ALLOWED.items():
        files = [PACKAGE / f"{layer}.py"] if (PACKAGE / f"{layer}.py").exists() else []
        files += sorted((PACKAGE / layer).rglob("*.py")) if (PACKAGE / layer).is_dir() else []
        assert files, layer
        for path in files:
            reached = palimpsest_imports(path) - {layer} - allowed
            assert not reached, f"{path.name} ({layer}) imports {sorted(reached)}"
