"""`palimpsest bench recall` through the CLI as a subprocess, on questions of our own and on
a tiny LoCoMo-shaped folder made here (the real LoCoMo stays outside the repository)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from palimpsest.domain.errors import NotFound, ValidationError
from palimpsest.evaluation import bench, devset, locomo
from palimpsest.service import Service

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
    assert words["categories"]["words"] == {
        "questions": 1, "no hit": 0.0, "recall@1": 0.5, "recall@5": 0.5, "recall@10": 0.5,
        "hit@1": 1.0, "hit@3": 1.0, "hit@5": 1.0,
    }  # fmt: skip
    assert set(result["meaning"]["all"]) == set(hybrid["all"])  # meaning alone, the baseline
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
        json.dumps({"question": "x", "expected": "m1"}),
        json.dumps({"question": "x", "expected": [""]}),
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


# -- the file checked whole before any question is asked (service level, both stores) -------


def test_a_notebook_the_store_lacks_is_refused_by_its_line(
    service: Service, tmp_path: Path
) -> None:
    cat = service.remember(notebook="home", kind="fact", text="Misu sleeps on the radiator")["id"]
    questions = write_jsonl(tmp_path / "q.jsonl", [
        {"question": "radiator", "expected": [cat], "notebook": "home"},
        {"question": "radiator", "expected": [cat], "notebook": "nowhere"},
    ])  # fmt: skip
    with pytest.raises(NotFound) as refused:
        bench.compare(service, bench.read_questions(questions))
    assert refused.value.field == "questions" and "line 2" in refused.value.message


def test_expected_ids_the_store_lacks_are_reported_by_line(
    service: Service, tmp_path: Path
) -> None:
    cat = service.remember(notebook="home", kind="fact", text="Misu sleeps on the radiator")["id"]
    gone = service.remember(notebook="home", kind="fact", text="The radiator was bled")["id"]
    service.forget(id=gone, because="a test")
    questions = write_jsonl(tmp_path / "q.jsonl", [
        {"question": "radiator", "expected": [cat]},
        {"question": "radiator", "expected": [cat, "m_typo"]},
        {"question": "radiator", "expected": [gone]},
    ])  # fmt: skip
    result = bench.compare(service, bench.read_questions(questions))
    assert result["unknown_expected"] == [
        {"line": 2, "ids": ["m_typo"]},
        {"line": 3, "ids": [gone]},
    ]
    (warning,) = result["warnings"]
    assert "2, 3" in warning
    assert result["full_text"]["all"]["recall@10"] == 0.5  # counted as misses, and said so


def test_the_cli_warns_of_expected_ids_the_store_lacks(run: Any, tmp_path: Path) -> None:
    cat = filed(run, "Our cat Misu sleeps on the radiator all winter.", embedder="none")
    questions = write_jsonl(tmp_path / "q.jsonl", [
        {"question": "radiator", "expected": [cat]},
        {"question": "radiator", "expected": ["m_typo"]},
    ])  # fmt: skip
    done = run("bench", "recall", str(questions), "--json", embedder="none")
    assert json.loads(done.stdout)["unknown_expected"] == [{"line": 2, "ids": ["m_typo"]}]
    shown = run("bench", "recall", str(questions), embedder="none")
    assert shown.returncode == 0 and "warning: expected ids on line(s) 2 " in shown.stdout


# -- LoCoMo folders that leave nothing to measure ----------------------------------------------

KEY = "AKIA" + "IOSFODNN7EXAMPLQ"  # the write gate refuses a turn holding it


def locomo_folder(tmp_path: Path, turns: dict[str, list[str]], asked: bool = True) -> Path:
    folder = tmp_path / "locomo"
    folder.mkdir()
    for name, texts in turns.items():
        write_jsonl(folder / f"{name}.memories.jsonl", [
            {"id": f"D1:{n}", "speaker": "Ana", "text": text} for n, text in enumerate(texts, 1)
        ])  # fmt: skip
        questions = [{"question": "What key?", "evidence": ["D1:1"], "category": 4}]
        write_jsonl(folder / f"{name}.questions.jsonl", questions if asked else [])
    return folder


@pytest.mark.parametrize(
    ("turns", "asked", "said"),
    [
        ({"a": [f"my key is {KEY}"], "b": [f"the key: {KEY}"]}, True, "refused all 2"),
        ({"a": []}, True, "no dialog turn"),
        ({"a": ["I adopted a kitten."]}, False, "no question"),
    ],
)
def test_a_locomo_folder_with_nothing_to_measure_says_what_happened(
    tmp_path: Path, turns: dict[str, list[str]], asked: bool, said: str
) -> None:
    folder = locomo_folder(tmp_path, turns, asked)
    with pytest.raises(ValidationError) as refused:
        locomo.measure_locomo(folder, "none", "user:test")
    assert refused.value.field == "locomo" and said in refused.value.message
    assert "docs/recall.md" in refused.value.message


def test_a_locomo_conversation_with_no_turn_filed_is_left_out_and_noted(tmp_path: Path) -> None:
    folder = locomo_folder(tmp_path, {"a": [f"my key is {KEY}"], "b": ["I adopted a kitten."]})
    result = locomo.measure_locomo(folder, "none", "user:test")
    assert result["questions"] == 1
    assert any("no turn of a was filed" in note for note in result["notes"])


def test_the_shipped_dev_set_files_whole_and_every_label_answers(tmp_path: Path) -> None:
    """Palimpsest's own dev set of project memory: every memory passes the write gate and
    files (superseded ones retire), and every expected label names a memory of the set
    that is still active when the questions are asked."""
    memories, rows = devset.read_devset(devset.SHIPPED)
    service, labels = devset.file_devset(tmp_path / "d.db", memories, "none", "user:local")
    try:
        named = {names[0]: memory_id for memory_id, names in labels.items()}
        assert len(named) == len(memories) >= 300
        questions = devset.devset_questions(rows)
        unanswerable = [q for q in questions if not q.expected]
        assert len(questions) - len(unanswerable) >= 300 and len(unanswerable) >= 50
        retired = {m["supersedes"] for m in memories if m.get("supersedes")}
        for question in questions:
            for label in question.expected:
                assert label in named and label not in retired, question.question
        assert {service.inspect(id=named[label])["memory"]["status"] for label in retired} == {
            "superseded"
        }
    finally:
        service.store.close()


def test_bench_recall_on_a_projects_folder(run: Any, tmp_path: Path) -> None:
    """`--projects DIR` files a set of that form into a temporary store and scores it,
    questions without an answer by how often nothing came back."""
    folder = tmp_path / "projects"
    folder.mkdir()
    write_jsonl(folder / "web.memories.jsonl", [
        {"label": "web-1", "notebook": "web", "session": 1, "kind": "decision",
         "text": "We ship to production with make release.", "why": "it runs migrations"},
        {"label": "web-2", "notebook": "web", "session": 2, "kind": "fact",
         "text": "The staging database is wiped every Sunday night."},
    ])  # fmt: skip
    write_jsonl(folder / "web.questions.jsonl", [
        {"question": "make release", "expected": ["web-1"], "category": "lexical",
         "notebook": "web"},
        {"question": "when is staging wiped?", "expected": ["web-2"], "category": "lexical"},
        {"question": "quantum chromodynamics lattice", "expected": [], "category": "no-answer",
         "notebook": "web"},
    ])  # fmt: skip
    done = run("bench", "recall", "--projects", str(folder), "--json", embedder="none")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)["full_text"]
    assert figures["categories"]["lexical"]["hit@1"] == 1.0
    assert figures["categories"]["no-answer"] == {"questions": 1, "no hit": 1.0}
    assert figures["all"]["questions"] == 3 and figures["all"]["hit@1"] == 1.0
    shown = run("bench", "recall", "--projects", str(folder), embedder="none")
    assert shown.returncode == 0 and "no-answer" in shown.stdout and "hit@3" in shown.stdout


def test_bench_recall_projects_alone_measures_the_shipped_dev_set(run: Any) -> None:
    done = run("bench", "recall", "--projects", "--json", embedder="none")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["questions"] >= 350 and result["hybrid"] is None
    assert result["full_text"]["categories"]["paraphrase"]["questions"] >= 200
