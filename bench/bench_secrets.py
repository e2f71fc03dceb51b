"""Secrets benchmark: score `find_secrets` on the labelled corpus and time it.

Run on demand, not by pytest:

    .venv/bin/python bench/bench_secrets.py
    .venv/bin/python bench/bench_secrets.py path/to/cases.jsonl --verbose

The labelled cases are not in this repository: by default they are read from
../shared/bench/secrets/cases.jsonl beside it (give that file, or the folder holding it).

Each case is one JSON object per line: `text`, `should_refuse`, `kind`, `secrets` (the
substrings that must not survive). Scored like ../shared/bench/secrets/baseline_detect_secrets.py:
a case is refused when there is any finding; "span-covered" counts refused positives whose
every secret lies inside one finding's span, and "redacted" those where `redact` leaves
none of them in the text. Prints precision, recall, false-positive rate, the kinds missed
and wrongly refused, and the time per call: mean and p95 over the cases, and on
8,000-character texts (ordinary prose, code-like config, and pathological inputs).

Then records, as the gate reads them (`find_in_parts`): false positives on every ordered
pair of negative cases (joined by a newline, as a title over a text, and glued where they
meet); and recall on positives whose secrets are disguised (a zero-width space or a soft
hyphen inside, fullwidth letters, Cyrillic or Greek look-alike letters, a fake
`[REDACTED:...]` marker in front) or split in two parts at the middle of the secret; and
false positives on a few notes in Cyrillic and Greek scripts, alone and two by two.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from palimpsest.screening.secrets import find_in_parts, find_secrets, prepare, redact  # noqa: E402

DEFAULT_CASES = REPO.parent / "shared" / "bench" / "secrets" / "cases.jsonl"
WHERE = (
    "The labelled cases are not in this repository: give the path of cases.jsonl (or its "
    "folder), by default ../shared/bench/secrets beside the repository."
)
LIMIT = 8_000  # the longest memory text allowed

# Ordinary notes: engineering prose that mentions passwords, tokens and keys now and then.
PROSE = (
    "We moved the deploy to Thursday because the staging database ran out of disk. "
    "Maria wants the migration plan reviewed before the rollout, and the on-call rota "
    "changes next week. The retro agreed to page earlier when p95 latency passes 300 ms. "
    "Recall should prefer recent memories when two say the opposite; the ranking test in "
    "tests/test_recall.py covers it. Our password policy asks for 14 characters. "
    "Dependencies are pinned in pyproject.toml and the lock file is regenerated monthly. "
    "The embedding model runs on CPU; batches of 64 keep memory under 2 GB. See commit "
    "3f2a9c1 for the change to the scheduler, and issue 4821 for the flaky import test. "
    "The token budget per turn stays at 8k. "
)
# The same length, dense with credential words that are not credentials (a stress case).
DENSE = (
    "The token budget per turn stays at 8k, the password policy asks for 14 characters, "
    "the key insight from the retro was to page earlier, and the secret sauce is small "
    "memories. See /srv/app/auth/token.py and the credentials guide. "
)
CONFIG = (
    "timeout = 30\nretries: 3\nlog_level=info\nmax_tokens: 4096\nregion: eu-west-1\n"
    "image: registry.internal/app@sha256:" + "ab12" * 16 + "\nuser: deploy\n"
)


def _fill(unit: str) -> str:
    return (unit * (LIMIT // len(unit) + 1))[:LIMIT]


def _time_per_call(fn: Callable[[], object], number: int) -> float:
    """The best of five batches, like timeit: other load on the machine only adds noise."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def cases_path(given: Path) -> Path:
    """The cases file `given` names (the file, or the folder holding cases.jsonl).

    Exits with one line saying what is missing: the data lives outside the repository.
    """
    path = given / "cases.jsonl" if given.is_dir() else given
    if given.is_dir() and not path.is_file():
        sys.exit(f"bench_secrets: no cases.jsonl in the folder {given}. {WHERE}")
    if not path.exists():
        sys.exit(f"bench_secrets: {given} does not exist. {WHERE}")
    if not path.is_file():
        sys.exit(f"bench_secrets: {given} is not a file or a folder. {WHERE}")
    return path.resolve()


def read_cases(path: Path) -> list[dict[str, Any]]:
    """Every case of the JSONL file; one line names the first line that is not a case."""
    cases = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            sys.exit(f"bench_secrets: {path} line {number} is not JSON ({exc.msg}).")
        if not isinstance(case, dict) or not {"text", "should_refuse"} <= case.keys():
            sys.exit(f"bench_secrets: {path} line {number} is not a case with text and "
                     "should_refuse.")  # fmt: skip
        cases.append(case)
    return cases


def score(path: Path, verbose: bool) -> None:
    cases = read_cases(path)
    tp = fp = fn = tn = covered = redacted = 0
    missed: collections.Counter[str] = collections.Counter()
    wrong: collections.Counter[str] = collections.Counter()
    times: list[float] = []
    for case in cases:
        text = case["text"]
        start = time.perf_counter()
        findings = find_secrets(text)
        times.append(time.perf_counter() - start)
        if case["should_refuse"]:
            if not findings:
                fn += 1
                missed[case["kind"]] += 1
                if verbose:
                    print(f"  MISS {case['id']} {case['kind']}: {text[:120]!r}")
                continue
            tp += 1
            spans = [text[f.start : f.end] for f in findings]
            ok_span = all(any(s in span for span in spans) for s in case["secrets"])
            covered += ok_span
            clean, _ = redact(text)
            redacted += not any(s in clean for s in case["secrets"])
            if verbose and not ok_span:
                print(f"  SPAN {case['id']} {case['kind']}: {spans!r} vs {case['secrets']!r}")
        elif findings:
            fp += 1
            wrong[case["kind"]] += 1
            if verbose:
                kinds = [(f.kind, text[f.start : f.end]) for f in findings]
                print(f"  FP   {case['id']} {case['kind']}: {text[:100]!r} -> {kinds!r}")
        else:
            tn += 1
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    fp_rate = fp / (fp + tn) if fp + tn else 0.0
    times.sort()
    p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
    print(f"{path}: n={len(cases)} TP={tp} FP={fp} FN={fn} TN={tn}")
    print(f"  precision {precision:.3f}  recall {recall:.3f}  false-positive rate {fp_rate:.3f}")
    print(f"  span-covered {covered}/{tp}  redacted {redacted}/{tp}")
    print(f"  missed kinds: {dict(missed.most_common())}")
    print(f"  false-positive kinds: {dict(wrong.most_common())}")
    mean_us = statistics.mean(times) * 1e6
    print(f"  time per case: mean {mean_us:.0f} us, p95 {p95 * 1e6:.0f} us")


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


# Every Latin letter that has one written as its Cyrillic or Greek look-alike.
_CYRILLIC = str.maketrans("ABEKMHOPCTXYISJaeopcxyisjh", "АВЕКМНОРСТХҮІЅЈаеорсхуіѕјһ")
_GREEK = str.maketrans("ABEZHIKMNOPTYXaoiv", "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαοιν")

DISGUISES: dict[str, Callable[[str], str]] = {
    "zero-width space inside": lambda s: s[: len(s) // 2] + "\u200b" + s[len(s) // 2 :],
    "soft hyphen inside": lambda s: s[: len(s) // 2] + "\u00ad" + s[len(s) // 2 :],
    "fullwidth": _fullwidth,
    "fake marker in front": lambda s: "[REDACTED:x]" + s,
    "Cyrillic look-alike letters": lambda s: s.translate(_CYRILLIC),
    "Greek look-alike letters": lambda s: s.translate(_GREEK),
}
# Ordinary notes in Cyrillic and Greek scripts, whose letters the screening copy reads as
# their Latin look-alikes: none holds a secret, alone or two by two.
CLEAN_CYRILLIC_GREEK = [
    "Пароль от базы лежит в хранилище kv/prod/db; ключ API меняем каждые 90 дней.",
    "Токен доступа выдаёт сервис авторизации, срок жизни — один час. Секрет хранится в Vault.",
    "СРОЧНО: ТАКСИ К ОФИСУ В 10:00, ВСЕ СОТРУДНИКИ ОТДЕЛА ЕКОМ И КРАСНОЯРСК-ТЕХ",
    "Релиз 2.4.1 выкатили в четверг: миграция схемы заняла 40 минут, откат не понадобился.",
    "Пароль зберігається у сховищі, а токен оновлюється щотижня. Інструкція: див. вікі.",
    "Лозинката е во трезорот; клучот за API се менува секој месец.",
    "Ο κωδικός πρόσβασης βρίσκεται στο vault· το κλειδί API αλλάζει κάθε μήνα.",
    "ΑΘΗΝΑ ΚΑΙ ΘΕΣΣΑΛΟΝΙΚΗ: ΤΟ ΕΡΓΟ ΠΑΡΑΔΟΘΗΚΕ ΣΤΗΝ ΩΡΑ ΤΟΥ, ΧΩΡΙΣ ΚΑΘΥΣΤΕΡΗΣΗ.",
    "password: пароль из хранилища; token — см. раздел «Секреты»; key: ключ",
    "Сервер АКІА-7 в стойке В12, кабель РС-45; ОТК проверил партию ХК-2024-ОС.",
]


def records(path: Path) -> None:
    cases = read_cases(path)
    negatives = [c["text"] for c in cases if not c["should_refuse"]]
    positives = [c for c in cases if c["should_refuse"]]
    pairs = [(a, b) for i, a in enumerate(negatives) for j, b in enumerate(negatives) if i != j]
    start = time.perf_counter()
    wrong = [(a, b) for a, b in pairs if find_in_parts([a, b])]
    took = (time.perf_counter() - start) / max(len(pairs), 1)  # a corpus may hold one negative
    print(f"records: {len(pairs)} ordered pairs of negatives, newline-joined and glued:")
    print(f"  false positives {len(wrong)}  ({took * 1e6:.0f} us per record)")
    for a, b in wrong[:5]:
        print(f"    FP {a[:50]!r} + {b[:50]!r}")
    for name, disguise in DISGUISES.items():
        found = 0
        for case in positives:
            text = case["text"]
            for secret in case["secrets"]:
                text = text.replace(secret, disguise(secret))
            found += bool(find_secrets(text))
        print(f"  disguised ({name}): recall {found / len(positives):.3f}")
    scripts = [(a, b) for a in CLEAN_CYRILLIC_GREEK for b in CLEAN_CYRILLIC_GREEK if a != b]
    wrong_scripts = [t for t in CLEAN_CYRILLIC_GREEK if find_secrets(t)]
    wrong_scripts += [f"{a} + {b}" for a, b in scripts if find_in_parts([a, b])]
    print(
        f"  Cyrillic and Greek prose: false positives {len(wrong_scripts)} of "
        f"{len(CLEAN_CYRILLIC_GREEK)} notes and {len(scripts)} pairs"
    )
    for text in wrong_scripts[:5]:
        print(f"    FP {text[:100]!r}")
    split = found = 0
    for case in positives:
        secret = max(case["secrets"], key=len)
        if len(secret) < 16 or secret not in case["text"]:
            continue
        at = case["text"].index(secret) + len(secret) // 2
        split += 1
        found += bool(find_in_parts([case["text"][:at], case["text"][at:]]))
    print(
        f"  split in two parts at the middle of the secret: recall {found / split:.3f} of {split}"
    )


def speed() -> None:
    texts = {
        "ordinary prose": _fill(PROSE),
        "prose dense with credential words": _fill(DENSE),
        "Cyrillic and Greek prose": _fill(" ".join(CLEAN_CYRILLIC_GREEK) + " "),
        "config lines": _fill(CONFIG),
        "'a' x 8000": "a" * LIMIT,
        "'=' x 8000": "=" * LIMIT,
        "'password=' repeated": _fill("password="),
        "'token: ' repeated": _fill("token: "),
        "'://a:' repeated": _fill("://a:"),
        "base64-ish run": _fill("AbC0+/"),
        "'-----BEGIN PRIVATE KEY-----' repeated": _fill("-----BEGIN PRIVATE KEY-----"),
    }
    print(f"time per call on {LIMIT:,}-character texts (best of 5 batches of 20):")
    for name, text in texts.items():
        per_call = _time_per_call(lambda t=text: find_secrets(t), 20)  # type: ignore[misc]
        print(f"  {name:42s} {per_call * 1e3:7.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "cases",
        nargs="?",
        type=Path,
        default=DEFAULT_CASES,
        help="the labelled cases (a JSONL file, or the folder holding cases.jsonl); they are "
        "not in this repository: by default ../shared/bench/secrets/cases.jsonl beside it",
    )
    parser.add_argument("--verbose", action="store_true", help="print each miss and error")
    args = parser.parse_args()
    path = cases_path(args.cases)
    prepare()  # patterns are compiled on first use: the times below are of reading alone
    score(path, args.verbose)
    records(path)
    speed()


if __name__ == "__main__":
    main()
