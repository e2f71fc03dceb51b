"""The check runner on real files in a temporary project: each kind, the folder form, and
paths that leave the project (`..` and absolute refused at write time, a symlink pointing
out failing at check time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest.domain.checks import MAX_BYTES, file_hash, run_check
from palimpsest.domain.errors import ValidationError
from palimpsest.domain.model import Check
from palimpsest.revise import parse_fields


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "migrations").mkdir(parents=True)
    (root / "config.toml").write_text("[db]\npool = 20\n")
    (root / "migrations" / "001.sql").write_text("BEGIN;\nCREATE TABLE a();\nCOMMIT;\n")
    (root / "migrations" / "002.sql").write_text("BEGIN;\nDROP TABLE a;\nCOMMIT;\n")
    (root / "migrations" / "old").mkdir()  # a folder inside: never read
    (root / "migrations" / "old" / "000.sql").write_text("no transaction\n")
    return root


def fails(check: Check, root: Path) -> list[tuple[str, str, str | None]]:
    return [(f.file, f.reason, f.literal) for f in run_check(check, root).failures]


def test_path_exists_holds_for_a_file_or_a_folder_and_fails_for_a_missing_one(
    project: Path,
) -> None:
    assert fails(Check("path_exists", "config.toml"), project) == []
    assert fails(Check("path_exists", "migrations"), project) == []
    assert fails(Check("path_exists", "README.md"), project) == [
        ("README.md", "does not exist", None)
    ]


def test_contains_and_absent_on_one_file(project: Path) -> None:
    assert fails(Check("contains", "config.toml", "pool = 20"), project) == []
    assert fails(Check("contains", "config.toml", "pool = 30"), project) == [
        ("config.toml", "lacks", "pool = 30")
    ]
    assert fails(Check("absent", "config.toml", "password"), project) == []
    found = run_check(Check("absent", "config.toml", "pool"), project).failures
    assert [(f.file, f.reason, f.literal, f.line) for f in found] == [
        ("config.toml", "holds", "pool", 2)
    ]


def test_requires_and_absent_all_name_each_literal_that_fails(project: Path) -> None:
    assert fails(Check("requires", "config.toml", literals=("[db]", "pool")), project) == []
    assert fails(Check("requires", "config.toml", literals=("[db]", "host", "port")), project) == [
        ("config.toml", "lacks", "host"),
        ("config.toml", "lacks", "port"),
    ]
    assert fails(Check("absent_all", "config.toml", literals=("host", "user")), project) == []
    assert fails(Check("absent_all", "config.toml", literals=("pool", "[db]")), project) == [
        ("config.toml", "holds", "pool"),
        ("config.toml", "holds", "[db]"),
    ]


def test_a_folder_check_reads_every_regular_file_directly_inside_and_none_below(
    project: Path,
) -> None:
    every = Check("requires", "migrations", literals=("BEGIN", "COMMIT"))
    outcome = run_check(every, project)
    assert outcome.holds and outcome.files == 2  # old/000.sql, one level down, is not read
    (project / "migrations" / "003.sql").write_text("ALTER TABLE a;\n")
    assert fails(every, project) == [
        ("migrations/003.sql", "lacks", "BEGIN"),
        ("migrations/003.sql", "lacks", "COMMIT"),
    ]
    assert fails(Check("absent", "migrations/", "DROP TABLE"), project) == [
        ("migrations/002.sql", "holds", "DROP TABLE")
    ]


def test_a_missing_path_fails_every_kind_rather_than_holding_unnoticed(project: Path) -> None:
    for check in (
        Check("contains", "gone.txt", "x"),
        Check("absent", "gone.txt", "x"),
        Check("absent_all", "gone.txt", literals=("x",)),
        Check("requires", "gone.txt", literals=("x",)),
    ):
        assert fails(check, project) == [("gone.txt", "does not exist", None)]


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a/../../b", "\\\\server"])
def test_a_path_leaving_the_project_is_refused_at_write_time(path: str) -> None:
    with pytest.raises(ValidationError) as refused:
        parse_fields({"check": {"kind": "contains", "path": path, "literal": "x"}})
    assert refused.value.field == "check.path"
    with pytest.raises(ValidationError):
        parse_fields({"anchors": [path]})


def test_a_symlink_out_of_the_project_fails_at_check_time(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "outside.txt"
    secret.write_text("pool = 20\n")
    (project / "linked.toml").symlink_to(secret)
    (project / "elsewhere").symlink_to(tmp_path)
    assert fails(Check("contains", "linked.toml", "pool"), project) == [
        ("linked.toml", "leaves the project", None)
    ]
    assert fails(Check("path_exists", "elsewhere/outside.txt"), project) == [
        ("elsewhere/outside.txt", "leaves the project", None)
    ]
    (project / "migrations" / "004.sql").symlink_to(secret)  # an entry of a checked folder
    assert ("migrations/004.sql", "leaves the project", None) in fails(
        Check("requires", "migrations", literals=("BEGIN",)), project
    )
    assert file_hash(project, "linked.toml") is None  # never read, not even to hash


def test_a_symlink_inside_the_project_is_followed(project: Path) -> None:
    (project / "current.toml").symlink_to(project / "config.toml")
    assert fails(Check("contains", "current.toml", "pool = 20"), project) == []


def test_binary_files_are_matched_as_bytes_and_oversized_ones_fail(project: Path) -> None:
    (project / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xffSIGNED-BY-US\x00")
    assert fails(Check("contains", "logo.png", "SIGNED-BY-US"), project) == []
    (project / "dump.bin").write_bytes(b"\0" * (MAX_BYTES + 1))
    [(file, reason, _)] = fails(Check("absent", "dump.bin", "password"), project)
    assert file == "dump.bin" and "too large" in reason


def test_a_file_hash_changes_with_its_content(project: Path) -> None:
    before = file_hash(project, "config.toml")
    assert before is not None and before.startswith("sha256:")
    assert file_hash(project, "config.toml") == before
    (project / "config.toml").write_text("[db]\npool = 30\n")
    assert file_hash(project, "config.toml") not in (before, None)
    assert file_hash(project, "missing.toml") is None
    assert file_hash(project, "migrations") is None  # a folder has no content hash


def test_a_loop_of_links_in_a_project_fails_its_check_and_never_breaks_recall(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """A repository may hold `conf.txt -> conf.txt` (git keeps links): an anchor or a check
    on it fails, as any unreadable path does; recall and doctor inside the project answer."""
    import subprocess
    import sys

    root = tmp_path / "proj"
    root.mkdir()
    (root / "conf.txt").write_text("port = 80\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, "-m", "palimpsest", "--db", str(tmp_path / "s.db"), *args]
        return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=60)

    filed = run("remember", "-n", "web", "The port is 80.", "--anchor", "conf.txt")
    assert filed.returncode == 0, filed.stderr
    bound = run("project", "bind", ".", "--notebook", "web")
    assert bound.returncode == 0, bound.stderr
    (root / "conf.txt").unlink()
    (root / "conf.txt").symlink_to(root / "conf.txt")
    for args in (("recall", "port"), ("doctor",), ("remember", "-n", "web", "Port stays 80.",
                                                    "--anchor", "conf.txt")):  # fmt: skip
        done = run(*args)
        assert "internal" not in done.stderr, (args, done.stderr)
    fails = run_check(Check(kind="contains", path="conf.txt", literal="80"), root)
    assert not fails.holds
