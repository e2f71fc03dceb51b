"""`palimpsest bench recall` through the CLI as a subprocess, on questions of our own and on
a tiny LoCoMo-shaped folder made here (the real LoCoMo stays outside the repository)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MEANING = {"PALIMPSEST_EMBEDDER": "all-MiniLM-L6-v2"}


@pytest.fixture
def run(env: dict[str, str], db_path: Path) -> Any:
    def run(*args: str, embedder: str = "all-MiniLM-L6-v2") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "palimpsest", "--db", str(db_path), *args],
            env=env | {"PALIMPSEST_EMBEDDER": embedder},
            capture_output=True,
            text=True,
            timeout=120,
        )

    return run


def filed(run: Any, text: str, embedder: str = "all-MiniLM-L6-v2") -> str:
    done = run("remember", "--notebook", "home", "--kind", "fact", text, "--json",
               embedder=embedder)  # fmt: skip
    assert done.returncode == 0, done.stderr
    memory_id: str = json.loads(done.stdout)["id"]
    return memory_id


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_bench_recall_compares_full_text_and_hybrid(run: Any, tmp_path: Path) -> None:
    cats = filed(run, "Our cat Misu sleeps on the radiator all winter.")
    mails = filed(run, "Login emails dropped by the provider since Tuesday.")
    filed(run, "Deploys go out with make release.")
    filed(run, "Bought a new kettle for the office.", embedder="none")  # no vector: a note
    questions = write_jsonl(tmp_path / "q.jsonl", [
        {"question": "feline", "expected": [cats], "category": "paraphrase"},
        {"question": "why are password reset mails not arriving", "expected": [mails],
         "category": "paraphrase", "notebook": "home"},
        {"question": "radiator", "expected": [cats, mails], "category": "words"},
    ])  # fmt: skip
    done = run("bench", "recall", str(questions), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["questions"] == 3
    words, hybrid = result["full_text"], result["hybrid"]
    assert words["categories"]["paraphrase"]["recall@5"] == 0.0
    assert hybrid["categories"]["paraphrase"]["recall@5"] == 1.0
    assert words["categories"]["words"] | {"questions": 1} == {
        "questions": 1, "recall@1": 0.5, "recall@5": 0.5, "recall@10": 0.5, "hit@5": 1.0,
    }  # fmt: skip
    assert hybrid["all"]["hit@5"] == 1.0
    assert any("reindex" in note for note in result["notes"])
    assert "hybrid" in done.stderr  # the progress bar's label, on stderr
    shown = run("bench", "recall", str(questions))
    assert shown.returncode == 0 and "paraphrase" in shown.stdout and "hybrid" in shown.stdout


def test_bench_recall_with_the_null_embedder_measures_full_text(run: Any, tmp_path: Path) -> None:
    cats = filed(run, "Our cat Misu sleeps on the radiator all winter.", embedder="none")
    questions = write_jsonl(tmp_path / "q.jsonl", [{"question": "radiator", "expected": [cats]}])
    done = run("bench", "recall", str(questions), "--json", embedder="none")
    result = json.loads(done.stdout)
    assert result["full_text"]["all"]["recall@1"] == 1.0
    assert result["hybrid"] is None and result["notes"]


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        json.dumps({"question": "x"}),
        json.dumps({"question": "x", "expected": []}),
        json.dumps({"question": "x", "expected": ["a"], "secret": "sk-live-123"}),
        json.dumps(
            {"question": "x", "expected": ["a"], "category": "sk-live-123 " + "ghp_" + "a1" * 18}
        ),
        json.dumps({"question": "x", "expected": ["a"], "category": "c" * 101}),
    ],
)
def test_a_bad_questions_line_is_refused_by_number(run: Any, tmp_path: Path, line: str) -> None:
    good = json.dumps({"question": "radiator", "expected": ["m1"]})
    questions = tmp_path / "q.jsonl"
    questions.write_text(f"{good}\n{line}\n", encoding="utf-8")
    done = run("bench", "recall", str(questions), "--json", embedder="none")
    assert done.returncode != 0
    error = json.loads(done.stdout)
    assert error["error_class"] == "validation" and "line 2" in error["message"]
    assert "sk-live-123" not in done.stdout + done.stderr


def test_bench_recall_on_a_locomo_folder(run: Any, tmp_path: Path) -> None:
    folder = tmp_path / "locomo"
    folder.mkdir()
    when = "1:56 pm on 8 May, 2023"
    write_jsonl(folder / "tiny.memories.jsonl", [
        {"id": "D1:1", "speaker": "Ana", "text": "I adopted a kitten last week.",
         "session": 1, "session_date_time": when},
        {"id": "D1:2", "speaker": "Ben", "text": "I am training for the Lisbon marathon.",
         "session": 1, "session_date_time": when},
        {"id": "D1:3", "speaker": "Ana", "text": "My sister moved to Berlin for work.",
         "session": 1, "session_date_time": when},
    ])  # fmt: skip
    write_jsonl(folder / "tiny.questions.jsonl", [
        {"question": "What pet did Ana get?", "evidence": ["D1:1"], "category": 4},
        {"question": "Which race is Ben running?", "evidence": ["D1:2"], "category": 4},
        {"question": "What did Ana tell?", "evidence": ["D1:1", "D1:3"], "category": 1},
    ])  # fmt: skip
    done = run("bench", "recall", "--locomo", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["questions"] == 3
    assert set(result["hybrid"]["categories"]) == {"multi-hop", "single-hop"}
    assert result["hybrid"]["categories"]["single-hop"]["hit@5"] == 1.0
    assert result["hybrid"]["categories"]["multi-hop"]["recall@10"] == 1.0
    listed = run("notebook", "list", "--json", embedder="none")
    assert "tiny" not in listed.stdout  # filed into a temporary store, not the user's


def test_bench_recall_needs_one_source(run: Any, tmp_path: Path) -> None:
    for args in ((), (str(tmp_path / "q.jsonl"), "--locomo", str(tmp_path))):
        done = run("bench", "recall", *args, "--json", embedder="none")
        assert done.returncode != 0
        assert json.loads(done.stdout)["error_class"] == "validation"
