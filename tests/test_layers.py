"""The dependency direction is the law (DESIGN section 3, STYLE.md): each layer imports only
what is below it. The domain knows no service or store; the store knows no service or
transport; the service knows no transport; the adapters reach the store only through the
service. Every module of the package belongs to a layer, so a new one must be placed.

An import counts however it is written: relative or absolute, `from palimpsest import
service`, inside a function, or through `importlib.import_module` or `__import__` with a
literal name; a module named only at run time is refused. The checker is itself tested on
snippets it must refuse and ones it must pass, so this test is shown able to fail."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "palimpsest"
# Rooms: packages whose modules are layers each, named `room.module`.
ROOMS = {"domain", "screening"}
DOMAIN = {f"domain.{m}" for m in ("model", "errors", "ids", "views", "text", "projects", "checks")}
SCREENING = {
    "screening.gate",
    "screening.secrets",
    "screening.secret_rules",
    "screening.detector_id",
}
# Each layer (a module or a package, by its top-level name, or `room.module`) -> what it may
# import.
ALLOWED = {
    "domain.__init__": set(),
    "domain.errors": set(),
    "domain.model": set(),
    "domain.ids": set(),
    "domain.text": set(),  # a person's text shown on one line
    "domain.views": {"domain.model"},
    "domain.projects": {"domain.errors"},  # the file binding a directory to a notebook
    "domain.checks": {"domain.model"},  # a check run against files: no store
    "screening.__init__": set(),
    "screening.secret_rules": set(),
    "screening.secrets": {"screening.secret_rules"},
    "screening.gate": {"domain.errors", "screening.secrets"},
    "screening.detector_id": set(),  # which detector: a digest of its files
    "revise": {"domain.model", "domain.errors", "screening.gate", "domain.text"},
    # files of ours and of other servers, read and written
    "formats": {"domain.model", "domain.errors"},
    "store": {"domain.model", "domain.errors"},
    "embed": {"domain.errors"},  # text to vectors; the store keeps vectors as plain arrays
    # reading commands and matching patterns: pure
    "guard": {"domain.model", "domain.errors", "domain.text"},
    "service": DOMAIN | SCREENING | {"revise", "store", "embed", "guard", "formats"},
    # Recall measured on questions: a client of the service, as the adapters are.
    "evaluation": {"domain.errors", "screening.gate", "store", "embed", "service"},
    # The process's configuration, for adapters. It holds an actor to the gate's rule and
    # names the embedders without loading the service: `serve` checks it before answering.
    "config": {"domain.errors", "embed", "screening.gate", "service"},
    # secrets by name, in the OS keychain
    "keychain": {"domain.errors", "screening.secret_rules", "screening.secrets"},
    # The adapters reach the rules (gate, revise, secrets) only through the service; below
    # it they read the shapes it answers in and how text is shown.
    "mcp": {"domain.errors", "domain.model", "domain.views", "domain.text", "service", "config"},
    # The HTTP API: the MCP server's tools over plain HTTP, described by their types.
    "api": {"domain.errors", "domain.views", "service", "mcp"},
    # The web page, served beside MCP (and the API) by the same process and keys.
    "web": {"domain.errors", "domain.model", "domain.views", "domain.text", "service", "config"}
    | {"mcp", "api"},
    # A replica's rounds with its server, over HTTP.
    "sync": {"domain.errors", "service"},
    "cli": {"domain.errors", "domain.model", "domain.views", "domain.text", "domain.projects"}
    | {"service", "config", "mcp", "web", "hook_guard", "keychain", "evaluation", "sync"},
    # The guard's hook must answer before the service could load: it reads the rules
    # through store/guard_rows.py alone, and keeps the command through the service.
    "hook_guard": {"domain.errors", "domain.model", "guard", "domain.projects", "store"}
    | {"service"},
    "launch": {"hook_guard", "cli"},
    "__init__": {"domain.errors", "service"},
    "__main__": {"launch"},
}
LAYERS = {p.stem for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}


# The functions that load a module by a name given at run time. A call to one with a literal
# name counts as an import of that name; `f"{__name__}.x"` (the CLI loading its commands) as
# one of the caller's own layer; anything else, or an importer renamed or passed on, as an
# import of `DYNAMIC`, which no layer may import.
IMPORTERS = {"import_module", "__import__"}
DYNAMIC = "(a module named at run time)"


def palimpsest_imports(path: Path) -> set[str]:
    """The layers (top-level palimpsest modules) a file imports."""
    return imports_in(path.read_text(), path.relative_to(PACKAGE).with_suffix("").parts)


def imports_in(source: str, module: tuple[str, ...]) -> set[str]:
    """The layers `source` imports, read as the module at `module` (its path in the package
    without `.py`: `("store", "sqlite")`), at any depth (inside functions too)."""
    here = ["palimpsest", *module[:-1]]  # the package a relative import starts from
    tree = ast.parse(source)
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_importer(n.func)]
    called = {id(call.func) for call in calls}
    found = set().union(*(_loaded_by(call, here, module[0]) for call in calls))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            found |= _layers(_absolute("." * node.level + (node.module or ""), here), names)
            if any(alias.name in IMPORTERS and alias.asname for alias in node.names):
                found.add(DYNAMIC)  # `import_module as load`: its calls would go unseen
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found |= _layers(alias.name.split("."), [])
        elif _is_importer(node) and id(node) not in called:
            found.add(DYNAMIC)
    return found


def _is_importer(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id in IMPORTERS) or (
        isinstance(node, ast.Attribute) and node.attr in IMPORTERS
    )


def _absolute(name: str, here: list[str]) -> list[str]:
    """The dotted parts of `name` (`..gate`), resolved from the package `here`."""
    level = len(name) - len(name.lstrip("."))
    if not level:
        return name.split(".")
    base = here[: len(here) - level + 1] if level <= len(here) else []
    return [*base, *(name[level:].split(".") if name[level:] else [])]


def _layers(parts: list[str], names: list[str]) -> set[str]:
    """The layer `from <parts> import <names>` reaches (`import <parts>` with no names): none
    outside the package; the first part inside it; for the package itself, each name that
    is a layer (`from palimpsest import service`) and `__init__` for the rest."""
    if parts[:1] != ["palimpsest"]:
        return set()
    if len(parts) > 1 and parts[1] in ROOMS:
        if len(parts) > 2:
            return {f"{parts[1]}.{parts[2]}"}
        return {f"{parts[1]}.{name}" for name in names} or {f"{parts[1]}.__init__"}
    if len(parts) > 1:
        return {parts[1]}
    return {
        f"{name}.__init__" if name in ROOMS else name if name in LAYERS else "__init__"
        for name in names
    } or {"__init__"}


def _loaded_by(call: ast.Call, here: list[str], layer: str) -> set[str]:
    """The layer `import_module(name, package)` or `__import__(name, globals, locals,
    fromlist, level)` loads."""
    importer = call.func.id if isinstance(call.func, ast.Name) else call.func.attr
    spots = ("name", "package") if importer == "import_module" else (
        "name", "globals", "locals", "fromlist", "level")  # fmt: skip
    given = dict(zip(spots, call.args, strict=False))
    given.update((k.arg, k.value) for k in call.keywords if k.arg)
    name = given.get("name")
    if isinstance(name, ast.JoinedStr) and _starts_with_own_name(name):
        return {layer}
    text = _literal(name)
    if not isinstance(text, str):
        return {DYNAMIC}
    if importer == "__import__":  # a relative one starts from the caller's package
        level, fromlist = _literal(given.get("level", ast.Constant(0))), _literal(
            given.get("fromlist", ast.Constant(())))  # fmt: skip
        if not isinstance(level, int) or not isinstance(fromlist, (list, tuple)):
            return {DYNAMIC}
        return _layers(_absolute("." * level + text, here), [str(n) for n in fromlist])
    if not text.startswith("."):
        return _layers(text.split("."), [])
    package = given.get("package")
    if isinstance(package, ast.Name) and package.id == "__package__":
        return _layers(_absolute(text, here), [])
    if isinstance(_literal(package), str):
        return _layers(_absolute(text, _literal(package).split(".")), [])
    return {DYNAMIC}


def _literal(node: ast.AST | None) -> object:
    try:
        return ast.literal_eval(node) if node is not None else None
    except (ValueError, TypeError, SyntaxError):
        return None


def _starts_with_own_name(name: ast.JoinedStr) -> bool:
    """`f"{__name__}.x"`: a submodule of the caller, so in the caller's layer."""
    head = name.values[:2]
    return (
        len(head) == 2
        and isinstance(head[0], ast.FormattedValue)
        and isinstance(head[0].value, ast.Name)
        and head[0].value.id == "__name__"
        and isinstance(head[1], ast.Constant)
        and str(head[1].value).startswith(".")
    )


def layer_of(path: Path) -> str:
    return layer_named(path.relative_to(PACKAGE).with_suffix("").parts)


def layer_named(module: tuple[str, ...]) -> str:
    """A module's layer: its top-level name, or `room.module` inside a room."""
    if module[0] in ROOMS and len(module) > 1:
        return f"{module[0]}.{module[1]}"
    return module[0]


def test_every_module_belongs_to_a_layer() -> None:
    unplaced = {layer_of(path) for path in PACKAGE.rglob("*.py")} - set(ALLOWED)
    assert not unplaced, f"add {sorted(unplaced)} to ALLOWED in {__file__}"


def forbidden(source: str, module: tuple[str, ...]) -> set[str]:
    """What `source`, as the module at `module`, imports that its layer may not."""
    layer = layer_named(module)
    return imports_in(source, module) - {layer} - ALLOWED[layer]


def test_each_layer_imports_only_what_is_below_it() -> None:
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).with_suffix("").parts
        reached = forbidden(path.read_text(), module)
        assert not reached, f"{path.relative_to(PACKAGE)} imports {sorted(reached)}"


def test_the_checker_sees_imports_at_every_depth() -> None:
    """The law is only as good as the import reader: relative imports from a subpackage
    and imports inside functions (the CLI loads the MCP SDK only when serving) count."""
    assert "store" in palimpsest_imports(PACKAGE / "service" / "base.py")
    assert "mcp" in palimpsest_imports(PACKAGE / "cli" / "serving.py")
    assert "service" in palimpsest_imports(PACKAGE / "mcp" / "tools.py")
    assert "mcp" in palimpsest_imports(PACKAGE / "api" / "app.py")
    assert "api" in palimpsest_imports(PACKAGE / "web" / "serve.py")


# Each way a store module could reach the service, and what the checker must call it.
STORE_REACHING_THE_SERVICE = {
    "from ..service import Service": {"service"},
    "from ..service.base import Base": {"service"},
    "from .. import service": {"service"},
    "from palimpsest import service": {"service"},
    "from palimpsest import config, service": {"config", "service"},
    "from palimpsest import open_service": {"__init__"},
    "import palimpsest": {"__init__"},
    "import palimpsest.service": {"service"},
    "import palimpsest.service.base as base": {"service"},
    "from palimpsest.service import Service": {"service"},
    "def later():\n    from ..service import Service": {"service"},
    "import importlib\nimportlib.import_module('palimpsest.service')": {"service"},
    "from importlib import import_module\nimport_module('palimpsest.service.base')": {"service"},
    "import importlib\nimportlib.import_module('.service', 'palimpsest')": {"service"},
    "import importlib\nimportlib.import_module('..service', __package__)": {"service"},
    "import importlib\nimportlib.import_module('..service', package='palimpsest.store')": {
        "service"
    },
    "__import__('palimpsest.service')": {"service"},
    "__import__('palimpsest', fromlist=['service'])": {"service"},
    "__import__('service', globals(), None, [], 2)": {"service"},
    "import builtins\nbuiltins.__import__('palimpsest.service')": {"service"},
    "import importlib\nimportlib.import_module(name)": {DYNAMIC},
    "import importlib\nimportlib.import_module('palimpsest.' + name)": {DYNAMIC},
    "import importlib\nimportlib.import_module('.service', package)": {DYNAMIC},
    "from importlib import import_module as load\nload('palimpsest.service')": {DYNAMIC},
    "import importlib\nload = importlib.import_module": {DYNAMIC},
    "__import__(f'palimpsest.{name}')": {DYNAMIC},
}
# What a store module may well write: nothing here is an import of another layer.
STORE_STAYING_IN_ITS_LAYER = [
    "from ..domain.model import Memory\nfrom ..domain.errors import Conflict",
    "from . import rows\nfrom .sqlite import SQLiteStore",
    "from ..domain import errors, model",
    "import importlib.metadata\nfrom importlib import resources",
    "import importlib\nimportlib.import_module('sqlite3')",
    "import importlib\nimportlib.import_module('.rows', __package__)",
    "import importlib\nimportlib.import_module(f'{__name__}.rows')",
    "__import__('json')",
    "import palimpsest.domain.model",
    "from palimpsest.domain import errors",
]


def test_the_checker_finds_each_way_to_reach_a_layer_above() -> None:
    """The checker run on code it must refuse: each way to import the service from a store
    module is reported, so the law above can fail."""
    for source, reached in STORE_REACHING_THE_SERVICE.items():
        assert forbidden(source, ("store", "sqlite")) == reached, source


def test_the_checker_passes_what_stays_below() -> None:
    for source in STORE_STAYING_IN_ITS_LAYER:
        assert not forbidden(source, ("store", "sqlite")), source
    assert forbidden("from ..screening.gate import shown_name", ("mcp", "schema")) == {
        "screening.gate"
    }
    assert imports_in("import importlib\nimportlib.import_module(f'{__name__}.app')",
                      ("cli", "__init__")) == {"cli"}  # fmt: skip


def test_a_room_holds_its_modules_to_their_own_layers() -> None:
    """Inside a room each module is a layer: views may read the model, the model may not
    read views, and nothing of the domain reaches the service or the gate."""
    assert not forbidden("from .model import Memory", ("domain", "views"))
    assert forbidden("from .views import shown", ("domain", "model")) == {"domain.views"}
    assert forbidden("from ..service import Service", ("domain", "checks")) == {"service"}
    assert forbidden("from palimpsest.screening import gate", ("domain", "model")) == {
        "screening.gate"
    }
    assert forbidden("from palimpsest import domain", ("store", "rows")) == {"domain.__init__"}
