"""Secrets known by their own shape: private-key blocks and bodies, vendor tokens with a
known prefix or signature (the table in `secret_rules`), and an AWS secret key near its id."""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..secret_rules import (
    BODY_PLACEHOLDER,
    DOCUMENTED,
    END,
    STOPWORDS,
    VENDOR_FORMATS,
    Shape,
    Token,
)
from .hits import Hit
from .values import HEX, RUN, b64_text, looks_random

# --- 1. private keys ----------------------------------------------------------------------

# A PEM block: "-----BEGIN [RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP ]PRIVATE KEY[ BLOCK]-----",
# a base64 body (real newlines, or \n escaped in JSON; headers such as "Proc-Type: 4,..."),
# and the END line when it is there (a truncated key is still a key).
_PEM = re.compile(
    r"-----BEGIN (?P<label>(?:[A-Z0-9]+ ){0,3})PRIVATE KEY(?: BLOCK)?-----"
    r"(?P<body>(?:[A-Za-z0-9+/=:,\s]|\\+[nr]|-(?!----))*)"
    r"(?:-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----)?"
)
# An elided or documented body: "MIIE...", "<key>", "XXXXXX", "EXAMPLE".
_PEM_PLACEHOLDER = re.compile(r"\.\.\.|…|<|x{6,}|X{6,}|EXAMPLE|REDACTED")
# A private key's base64 body without its BEGIN/END lines (copied from the middle of a file):
# DER that opens with a version number (PKCS#1, PKCS#8 and SEC1 private keys; certificates
# and public keys open otherwise), or an openssh-key-v1 blob. Lines as in PEM or JSON.
_BODY_LINES = r"[A-Za-z0-9+/]{40,}={0,2}(?:(?:\r?\n|(?:\\r)?\\n)[ \t]*[A-Za-z0-9+/]{4,}={0,2})*"
_KEY_BODIES = (re.compile("M[A-I]" + _BODY_LINES), re.compile("b3BlbnNzaC1rZXktdjE" + _BODY_LINES))
_KEY_VERSION = (b"\x02\x01\x00", b"\x02\x01\x01")


def _is_private_key_body(body: str) -> bool:
    """Base64 of a DER private key (its version comes first) or of an OpenSSH private key."""
    if len(body) < 64:
        return False
    if body.startswith("b3BlbnNzaC1rZXktdjE"):
        return True
    try:
        head = base64.b64decode(body[:16])
    except (binascii.Error, ValueError):
        return False
    if head[:1] != b"\x30" or len(head) < 8:
        return False
    size = head[1]
    offset = 2 if size < 0x80 else 2 + (size & 0x7F)
    return head[offset : offset + 3] in _KEY_VERSION


# PuTTY's .ppk: a header line, then "Private-Lines: N" and the base64 lines.
_PUTTY = re.compile(
    r"PuTTY-User-Key-File-\d: [^\r\n]{0,100}"
    r"(?:(?:\r?\n|\\n)[^\r\n\\]{0,200}){0,40}?(?:\r?\n|\\n)Private-Lines: \d+"
    r"(?:(?:\r?\n|\\n)[A-Za-z0-9+/=]{1,128})+"
)


# A PEM private key in base64 ("LS0tLS1CRUdJTi" is "-----BEGIN"): kubeconfig client-key-data,
# Kubernetes Secret data, CI variables.
_PEM_B64 = re.compile(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{60,}={0,2}")


def private_keys(text: str) -> Iterator[Hit]:
    if "PRIVATE KEY" in text:
        for m in _PEM.finditer(text):
            body = re.sub(r"\\+[nr]|\s", "", m["body"])
            if len(body) < 64 or _PEM_PLACEHOLDER.search(body):
                continue  # a header shown as a format, or an elided body
            label = m["label"].strip()
            kind = {"OPENSSH": "openssh-private-key", "PGP": "pgp-private-key"}.get(
                label, "openssh-private-key" if body.startswith("b3BlbnNzaC1rZXkt") else ""
            )
            yield Hit(kind or "pem-private-key", m.start(), m.end(), 0)
    if "LS0tLS1CRUdJTi" in text:
        for m in _PEM_B64.finditer(text):
            raw = m[0][: len(m[0]) // 4 * 4]
            try:
                head = base64.b64decode(raw[:200])
            except (binascii.Error, ValueError):
                continue
            if b"PRIVATE KEY" in head:
                yield Hit("pem-private-key", m.start(), m.end(), 0)
    for pattern in _KEY_BODIES:
        for m in pattern.finditer(text):
            body = re.sub(r"\\+[nr]|\s", "", m[0])
            if starts_word(text, m.start()) and _is_private_key_body(body):
                yield Hit("pem-private-key", m.start(), m.end(), 0)
    if "PuTTY-User-Key-File" in text:
        for m in _PUTTY.finditer(text):
            yield Hit("putty-private-key", m.start(), m.end(), 0)


# --- 2. vendor tokens with a known prefix or shape ----------------------------------------


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: str  # group `v` is the secret; `b`, if any, its random body (`_pattern`)
    hints: tuple[str, ...]  # the rule runs only when one of these literals occurs
    check: Callable[[str], bool] | None  # a further test of the body
    runs_ok: bool  # the format itself repeats a character (Twitter's AAAA...)
    word_start: bool  # the secret starts a word (not when a fixed context precedes)


def _random_body(body: str) -> bool:
    return looks_random(body, 16)


def _discord_id(token: str) -> bool:
    """The first part of a Discord bot token is the bot's numeric id in base64."""
    raw = b64_text(token.split(".", 1)[0])
    return raw is not None and raw.isdigit()


def _sas_signature(value: str) -> bool:
    """A SAS `sig=` is url-encoded base64: a percent sign, or a random value of 30+."""
    return "%" in value or looks_random(value, 30)


# The further tests a format may name (`check` in secret_rules).
_CHECKS: dict[str, Callable[[str], bool]] = {
    "random": _random_body,
    "discord-id": _discord_id,
    "sas": _sas_signature,
}


def _compiled(entry: Token | Shape) -> _Rule:
    """A format of the table, ready to run.

    A token's start is checked in Python (`starts_word`): a leading lookbehind would keep
    the regex engine from searching for the literal prefix. Without hints, a token's prefix
    is its hint when it is a literal.
    """
    check = _CHECKS[entry.check] if entry.check else None
    hints = tuple(entry.hints.split())
    if isinstance(entry, Shape):
        return _Rule(entry.kind, entry.pattern, hints, check, False, entry.word_start)
    if not hints and re.escape(entry.prefix).replace("\\-", "-") == entry.prefix:
        hints = (entry.prefix,)
    pattern = rf"(?P<v>(?:{entry.prefix})(?P<b>{entry.body})){END}"
    return _Rule(entry.kind, pattern, hints, check, entry.runs_ok, True)


_VENDOR_RULES = tuple(_compiled(entry) for entry in VENDOR_FORMATS)
# A rule's pattern is compiled when its hint first occurs (or by `prepare`), not at import:
# together they cost tens of milliseconds. Thread-safe: two threads compiling the same
# pattern at once each get an equal one.
_pattern = functools.cache(re.compile)


def prepare() -> None:
    """Compile every rule's pattern now (see `secrets.prepare`)."""
    for rule in _VENDOR_RULES:
        _pattern(rule.pattern)


# Each distinct hint with the rules it lets run; rules without hints always run.
_HINT_RULES: dict[str, tuple[int, ...]] = {}
for _index, _each in enumerate(_VENDOR_RULES):
    for _hint in _each.hints:
        _HINT_RULES[_hint] = (*_HINT_RULES.get(_hint, ()), _index)
_ALWAYS = tuple(i for i, rule in enumerate(_VENDOR_RULES) if not rule.hints)
# A body of lowercase words ("your-bot-token", "yourtokenhere") is a placeholder, not a key.
# The same as a placeholder, for the random body of a vendor token.
_BODY_PLACEHOLDER = re.compile(BODY_PLACEHOLDER)
_FAKE_BODY = re.compile(r"[-_]?[a-z]+(?:[-_][a-z]+)*[-_]?")


def starts_word(text: str, start: int) -> bool:
    """No letter or digit just before `start` (an escaped "\\n" in JSON counts as a break)."""
    return start == 0 or not text[start - 1].isalnum() or (start >= 2 and text[start - 2] == "\\")


def vendor_tokens(text: str) -> Iterator[Hit]:
    # Every vendor token lies inside a run of 16+ non-space characters holding its hint:
    # looking for hints, then for matches, in those runs first keeps ordinary prose cheap.
    runs = "\n".join(word for word in text.split() if len(word) >= 16)
    if not runs:
        return
    active = set(_ALWAYS)
    for hint, indexes in _HINT_RULES.items():
        if hint in runs:
            active.update(indexes)
    for index in sorted(active):
        rule = _VENDOR_RULES[index]
        pattern = _pattern(rule.pattern)
        if pattern.search(runs) is None:
            continue
        for m in pattern.finditer(text):
            value = m["v"]
            body = m.groupdict().get("b") or value
            if rule.word_start and not starts_word(text, m.start("v")):
                continue
            if value in DOCUMENTED:
                continue
            if _FAKE_BODY.fullmatch(body) or _BODY_PLACEHOLDER.search(body):
                continue
            if not rule.runs_ok and (RUN.search(body) or body.lower() in STOPWORDS):
                continue
            if rule.check is None or rule.check(body):
                yield Hit(rule.kind, m.start("v"), m.end("v"), 1 + index)


STRUCT_RANK = 1 + len(_VENDOR_RULES)


# An AWS secret access key: 40 base64 characters, found near an access key id.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")


def aws_secret_near_key_id(text: str, hits: list[Hit]) -> Iterator[Hit]:
    """A 40-character base64 secret within a few lines after an AWS access key id."""
    for hit in hits:
        if hit.kind != "aws-access-key-id":
            continue
        window_end = min(len(text), hit.end + 300)
        for m in _AWS_SECRET.finditer(text, hit.end, window_end):
            value = m["v"]
            if not HEX.fullmatch(value) and looks_random(value, 40):
                yield Hit("aws-secret-access-key", m.start(), m.end(), 1)
