"""`palimpsest serve` loads the embedding model on a thread of its own as it starts, so the
first recall by meaning does not wait for it and answers that need no meaning never do."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest

from palimpsest.embed import NullEmbedder
from palimpsest.embed.minilm import MiniLMEmbedder
from palimpsest.mcp import TOOL_NAMES
from palimpsest.mcp.descriptions import INSTRUCTIONS
from palimpsest.mcp.server import build_server, load_model_in_background
from palimpsest.service import Service
from palimpsest.store import open_store


def test_the_model_is_loaded_in_the_background(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder()  # a new one: the shared one of load_embedder may be loaded
    assert embedder._runtime is None  # loaded on the first embed, not before
    thread = load_model_in_background(
        Service(open_store(str(tmp_path / "s.db")), embedder=embedder)
    )
    assert thread is not None and thread.daemon
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert embedder._runtime is not None


def test_nothing_is_loaded_for_the_null_embedder(tmp_path: Path) -> None:
    service = Service(open_store(str(tmp_path / "s.db")), embedder=NullEmbedder())
    assert load_model_in_background(service) is None


def _fresh(code: str) -> None:
    """Run `code` in a new interpreter: what one process does before anything is loaded."""
    subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=True, timeout=120)


def test_threads_screening_at_once_share_the_patterns_built_on_first_use() -> None:
    """The detector compiles its patterns the first time a text needs them: threads that
    all start at once, before anything is built, find what a later single reading finds."""
    _fresh(
        """
        import threading
        from palimpsest.screening.secrets import find_secrets, prepare

        texts = [
            "mot de passe: Xy7!kq92plus", "Passwort ist Geheim-2024!", "パスワードは Zq8#pw42",
            "пароль: Tr0ub4dor&3x", "token ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
            "nothing to see in this note", "user:root",
        ]
        start = threading.Barrier(8)
        found = [None] * 8

        def screen(i):
            start.wait()
            found[i] = [find_secrets(t) for t in texts]

        threads = [threading.Thread(target=screen, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        prepare()
        expected = [find_secrets(t) for t in texts]
        assert all(f == expected for f in found), found
        assert all(expected[:5]) and not any(expected[5:])
        """
    )


def test_prepare_compiles_every_pattern_ahead() -> None:
    _fresh(
        """
        from palimpsest.screening.secrets import find_secrets, prepare

        prepare()  # an invalid pattern of the tables would raise here, not at import
        assert find_secrets("clé api: q8Zr3kLm9vXw2pTn") and not find_secrets("clé perdue")
        """
    )


def test_serving_imports_no_numpy_before_a_vector_is_needed() -> None:
    """`palimpsest serve` and the command line load numpy (and the model's runtime) only
    when a vector is needed, not to start."""
    _fresh(
        """
        import sys, tempfile
        from palimpsest.cli.app import main
        import palimpsest.cli.admin, palimpsest.mcp
        from palimpsest.service import load_embedder, open_service

        path = tempfile.mkdtemp() + "/s.db"
        service = open_service(path, actor="user:ana", embedder=load_embedder("minilm"))
        service.recall(query="", limit=5)
        service.close()
        loaded = {"numpy", "onnxruntime", "tokenizers"} & set(sys.modules)
        assert not loaded, loaded
        """
    )


# Packages that only HTTP needs, and our modules that only `serve --http` uses.
HTTP_PACKAGES = {"uvicorn", "starlette", "sse_starlette", "httpx", "httpx2", "httpx_sse", "h11",
                 "httptools", "websockets", "python_multipart", "multipart"}  # fmt: skip
OURS_FOR_HTTP = {"palimpsest.mcp.transport", "palimpsest.mcp.shares"}
# `palimpsest serve` as its command runs it, writing at exit the modules it had loaded.
SERVE_AND_LIST = """
import atexit, json, os, runpy, sys
def write():
    with open(os.environ["MODULES_OUT"], "w") as out:
        json.dump(sorted(sys.modules), out)
atexit.register(write)
sys.argv = ["palimpsest", *sys.argv[1:]]
runpy.run_module("palimpsest", run_name="__main__", alter_sys=True)
"""
SDK_AND_LIST = "import json, sys, mcp.server.mcpserver; print(json.dumps(sorted(sys.modules)))"
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {},
         "clientInfo": {"name": "test", "version": "0"}}  # fmt: skip


def _rpc(number: int | None, method: str, params: dict[str, object]) -> bytes:
    message = {"jsonrpc": "2.0", "method": method, "params": params}
    return (json.dumps(message if number is None else {**message, "id": number}) + "\n").encode()


def _http_modules(modules: list[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in HTTP_PACKAGES or m in OURS_FOR_HTTP}


def test_serving_over_stdio_loads_nothing_for_http(tmp_path: Path, env: dict[str, str]) -> None:
    """`serve` over stdio, through its first answers and a recall, loads no HTTP piece beyond
    those the MCP SDK's own import loads (the floor of its start-up): uvicorn's connections,
    h11, our guarded transport and the keys' shares wait for `--http`."""
    listed = tmp_path / "modules.json"
    recall = {"name": "recall", "arguments": {"query": "deploy", "limit": 3}}
    messages = [_rpc(1, "initialize", HELLO), _rpc(None, "notifications/initialized", {}),
                _rpc(2, "tools/list", {}), _rpc(3, "tools/call", recall)]  # fmt: skip
    with subprocess.Popen(
        [sys.executable, "-c", SERVE_AND_LIST, "--db", str(tmp_path / "s.db"), "serve"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**env, "MODULES_OUT": str(listed)},
    ) as process:  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(b"".join(messages))
        process.stdin.flush()
        answered = [json.loads(process.stdout.readline()).get("id") for _ in range(3)]
        process.stdin.close()
        assert process.wait(timeout=60) == 0
    assert answered == [1, 2, 3]
    floor = subprocess.run([sys.executable, "-c", SDK_AND_LIST], env=env, check=True,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
    extra = _http_modules(json.loads(listed.read_text())) - _http_modules(json.loads(floor.stdout))
    assert not extra, sorted(extra)


def test_tools_left_for_later_are_made_on_first_need(tmp_path: Path) -> None:
    """`serve` over stdio makes its tools once `initialize` is answered; a client that
    asks for them first (or calls one) still finds them all."""
    service = Service(open_store(str(tmp_path / "s.db")), embedder=NullEmbedder())
    server = build_server(service, tools_later=True)
    try:
        assert server._tool_manager.list_tools() == []  # initialize waits for none of them
        listed = anyio.run(server.list_tools)
        assert [tool.name for tool in listed] == list(TOOL_NAMES)
        result = anyio.run(server.call_tool, "recall", {"query": "", "limit": 1})
        assert not result.is_error
    finally:
        server.close()


# What a client's `initialize` does not wait for: the service and all it loads (the store,
# the secret detector, the tools' argument models and answer types), and numpy.
NOT_BEFORE_INITIALIZE = {"palimpsest.service", "palimpsest.store", "palimpsest.screening.secrets",
                         "palimpsest.mcp.tools", "palimpsest.mcp.params", "numpy"}  # fmt: skip
# `palimpsest serve` as its command runs it, writing the modules it has loaded just before
# its first answer goes on the wire (the event loop writes a pipe with os.write): what
# came after it, a client did not wait for.
SERVE_AND_LIST_AT_FIRST_ANSWER = """
import json, os, runpy, sys
write = os.write
def write_noting_modules(fd, data):
    if b'"jsonrpc"' in bytes(data[:100]) and not os.path.exists(os.environ["MODULES_OUT"]):
        with open(os.environ["MODULES_OUT"] + ".part", "w") as out:
            json.dump(sorted(sys.modules), out)
        os.replace(os.environ["MODULES_OUT"] + ".part", os.environ["MODULES_OUT"])
    return write(fd, data)
os.write = write_noting_modules
sys.argv = ["palimpsest", *sys.argv[1:]]
runpy.run_module("palimpsest", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("actor", [[], ["--actor", "agent:claude-code"]])
def test_serving_answers_initialize_before_loading_the_service(
    tmp_path: Path, env: dict[str, str], actor: list[str]
) -> None:
    """`serve` over stdio answers `initialize` (its instructions and name) before it imports
    the service: a client waits for little more than the MCP SDK's own import. An actor
    given (as the client configuration of docs/operations.md gives one) is screened for
    secrets before the answer, and loads the secret detector for that alone."""
    listed = tmp_path / "modules.json"
    not_yet = NOT_BEFORE_INITIALIZE - ({"palimpsest.screening.secrets"} if actor else set())
    with subprocess.Popen(
        [sys.executable, "-c", SERVE_AND_LIST_AT_FIRST_ANSWER, "--db", str(tmp_path / "s.db"),
         *actor, "serve"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**env, "MODULES_OUT": str(listed)},
    ) as process:  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(_rpc(1, "initialize", HELLO))
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        assert listed.exists(), "the answer went out through no os.write"
        process.stdin.close()
        assert process.wait(timeout=60) == 0
    assert answer["result"]["instructions"] == INSTRUCTIONS
    assert answer["result"]["serverInfo"]["name"] == "palimpsest"
    loaded = not_yet & set(json.loads(listed.read_text()))
    assert not loaded, sorted(loaded)


def test_a_store_that_cannot_be_opened_ends_the_server_as_a_command_is_refused(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """The store is opened once the client has its answer to `initialize`: one that cannot
    be opened ends the server with the refusal and the exit code any command gives."""
    broken = tmp_path / "broken.db"
    broken.write_text("not a database")
    with subprocess.Popen(
        [sys.executable, "-m", "palimpsest", "--db", str(broken), "serve"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    ) as process:  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(_rpc(1, "initialize", HELLO))
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1
        process.stdin.write(_rpc(None, "notifications/initialized", {}))
        process.stdin.write(_rpc(2, "tools/list", {}))
        process.stdin.flush()
        assert process.wait(timeout=60) == 1
        assert process.stderr is not None
        said = process.stderr.read()
    migrate = subprocess.run(
        [sys.executable, "-m", "palimpsest", "--db", str(broken), "migrate"],
        env=env, capture_output=True, timeout=60,
    )  # fmt: skip
    assert migrate.returncode == 1
    assert said.startswith(b"error (validation)") and said == migrate.stderr
