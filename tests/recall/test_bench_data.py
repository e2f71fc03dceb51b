"""The benchmarks that read data from outside the repository say so, and fail clearly.

`bench/bench_locomo.py` and `bench/bench_secrets.py` read labelled data kept beside the
repository (`../shared/bench/...`), never copied into it. A clone has no such folder: the
benchmark must say where the data comes from in its --help and, without the data, stop
with one line saying what is missing, not a traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LOCOMO = REPO / "bench" / "bench_locomo.py"
SECRETS = REPO / "bench" / "bench_secrets.py"


def _run(script: Path, *args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def _one_line_refusal(done: subprocess.CompletedProcess[str]) -> str:
    """The refusal's single line on standard error (asserting it is one line, no traceback)."""
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("script", "folder"),
    [(LOCOMO, "../shared/bench/locomo"), (SECRETS, "../shared/bench/secrets")],
)
def test_help_says_the_data_lives_outside_the_repository(script: Path, folder: str) -> None:
    done = _run(script, "--help")
    assert done.returncode == 0
    help_text = " ".join(done.stdout.split())
    assert folder in help_text
    assert "not in this repository" in help_text


# -- bench_secrets ---------------------------------------------------------------------


def _cases(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    token = "ghp_" + uuid.uuid4().hex + uuid.uuid4().hex[:4]  # made here, never a real one
    cases = [
        {"text": f"CI pushes with {token}", "should_refuse": True, "kind": "github-pat",
         "secrets": [token]},
        {"text": "We deploy on Thursdays.", "should_refuse": False, "kind": None, "secrets": []},
    ]  # fmt: skip
    path = folder / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


def test_secrets_bench_without_its_data_says_what_is_missing(tmp_path: Path) -> None:
    line = _one_line_refusal(_run(SECRETS, tmp_path / "nowhere" / "cases.jsonl"))
    assert "nowhere" in line
    assert "../shared/bench/secrets" in line


def test_secrets_bench_accepts_the_folder_that_holds_cases_jsonl(tmp_path: Path) -> None:
    _cases(tmp_path / "secrets")
    done = _run(SECRETS, tmp_path / "secrets")
    assert done.returncode == 0, done.stderr
    assert "n=2 TP=1 FP=0 FN=0 TN=1" in done.stdout


def test_secrets_bench_refuses_a_folder_without_cases_jsonl(tmp_path: Path) -> None:
    line = _one_line_refusal(_run(SECRETS, tmp_path))
    assert "cases.jsonl" in line


def test_secrets_bench_refuses_a_file_that_is_not_jsonl(tmp_path: Path) -> None:
    broken = tmp_path / "cases.jsonl"
    broken.write_text("this is not JSON\n", encoding="utf-8")
    line = _one_line_refusal(_run(SECRETS, broken))
    assert "line 1" in line


# -- bench_locomo ----------------------------------------------------------------------


def test_locomo_bench_without_its_data_says_what_is_missing(tmp_path: Path) -> None:
    line = _one_line_refusal(_run(LOCOMO, "--data", tmp_path / "nowhere"))
    assert "nowhere" in line
    assert "../shared/bench/locomo" in line


def test_locomo_bench_refuses_a_file_for_the_data_folder(tmp_path: Path) -> None:
    a_file = tmp_path / "conv-1.memories.jsonl"
    a_file.write_text("", encoding="utf-8")
    line = _one_line_refusal(_run(LOCOMO, "--data", a_file))
    assert "not a folder" in line


def test_locomo_bench_refuses_a_conversation_without_its_questions(tmp_path: Path) -> None:
    (tmp_path / "conv-1.memories.jsonl").write_text("", encoding="utf-8")
    line = _one_line_refusal(_run(LOCOMO, "--data", tmp_path))
    assert "conv-1.questions.jsonl" in line
