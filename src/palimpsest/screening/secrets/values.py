"""Judging a value: placeholders, references and public values are allowed; what looks
machine-made, secret-like or like a password is not. No position in a text, only the value."""

from __future__ import annotations

import base64
import binascii
import math
import re

from ..secret_rules import DOCUMENTED, PLACEHOLDER_WORDS, PUBLIC_PREFIX, SECRET_NAME, STOPWORDS

# --- what is allowed: placeholders, references, public values --------------------------


def _cased(*words: str) -> str:
    """Each word as lowercase, UPPER or Capitalised; a random key may hold "YOuR" by chance."""
    return "|".join(sorted({v for w in words for v in (w, w.upper(), w.capitalize())}))


# Obvious placeholders and documented examples, anywhere in a value.
_PLACEHOLDER = re.compile(
    r"x{4,}|X{4,}|\*{3,}|\.{3,}|…|•{3,}|#{4,}|<[^>]*>|\{\{|\$\{|0123456|123456789|abcdefgh|"
    + _cased(*PLACEHOLDER_WORDS)
    + r"|ChangeMe|_(?:here|HERE)\b|(?:here|HERE|Here)$"
)
# The same character eight times running: "T00000000", "aaaaaaaa" (not in a random body).
RUN = re.compile(r"(.)\1{7,}")
# Variable references and templating: ${DB_PASSWORD}, $TOKEN, %(pw)s, {{ secrets.X }},
# os.environ[...], process.env.X, !vault, arn:..., op://..., ENC[...].
_REFERENCE = re.compile(
    r"^(?:[$%{]|#\{|ENC\[|@[\w.]+@$"
    r"|!(?:vault|Ref|Sub|GetAtt|ImportValue|Secret|ENV|env|include|Join|Base64)$"
    r"|(?:vault|op|arn|ssm|env|file|secretsmanager|awskms|gcpkms):"
    r"|os\.environ|os\.getenv|getenv|process\.env|ENV\[|ENV\.fetch|System\.getenv"
    r"|Environment\.GetEnvironmentVariable|env\(|secrets\.|vars\.|var\.|local\.|data\.)"
)
_PUBLIC_PREFIX = re.compile(PUBLIC_PREFIX)
_SECRET_BY_NAME = re.compile(f"secret:({SECRET_NAME})")

HEX = re.compile(r"(?:0x)?[0-9a-f]+|(?:0x)?[0-9A-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Identifiers made of words: camelCase, PascalCase, snake_case, kebab-case, dotted.
WORDY = re.compile(r"[A-Za-z][a-z]*(?:[-_./:][A-Za-z][a-z]*|[A-Z][a-z]+)*|[A-Z]+(?:[-_][A-Z]+)*")
# Code, not a literal: calls, subscripts, attribute chains (``args.password``).
CODE = re.compile(r"[()\[\]]|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
# Numbers with units, versions, dates: "8k", "90d", "2.4.1", "2024-01-01".
_MEASURE = re.compile(r"v?\d+(?:[.:/-]\d+)*[a-z]{0,5}[+%]?", re.I)
# Algorithm and standard names: "AES-256-GCM", "RSA-2048", "Ed25519", "HS256", "CVE-2024-1".
_ALGORITHM = re.compile(
    r"(?:aes|rsa|sha|hs|rs|es|ps|ed|x|p|chacha|poly|secp|des|blake|md|hmac|argon|pbkdf"
    r"|scrypt|bcrypt|ecdsa|ecdh|dsa|tls|ssl|utf|iso|rfc|cve)[-_]?\d{1,5}(?:[-_/.][a-z0-9]{1,8}){0,3}",
    re.I,
)
_PATH = re.compile(r"^(?:~/|\.\.?/|[A-Za-z]:\\|[a-z][a-z0-9+.\-]{1,20}://|file:)")
_B64ISH = re.compile(r"[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+={0,2}")


def is_path(value: str) -> bool:
    """A path or URL: "~/x", "./x", "C:\\x", "https://x"; "/x/y" only with words or a file."""
    return bool(_PATH.match(value)) or (value[:1] == "/" and is_pathlike(value))


def _is_placeholder(value: str) -> bool:
    if any(doc in value for doc in DOCUMENTED) or value.rstrip("=").lower() in STOPWORDS:
        return True
    return bool(_PLACEHOLDER.search(value) or RUN.search(value))


def _is_reference(value: str) -> bool:
    by_name = _SECRET_BY_NAME.fullmatch(value)
    if by_name:  # a key pasted after "secret:" is still a key, a password still a password
        name = by_name[1]
        one_word = not any(c in "._/-" for c in name)
        if looks_random(name) or (one_word and looks_like_password(name)):
            return False
        parts = _NAME_SEPARATORS.split(name)
        return not (looks_like_password(name) and any(map(_password_part, parts)))
    return bool(_REFERENCE.match(value))


_NAME_SEPARATORS = re.compile(r"[._/-]")
_DIGIT_IN_WORD = re.compile(r"[A-Za-z]\d+[A-Za-z]")


def _password_part(part: str) -> bool:
    """A part of a name made like a password, not a word: digits inside letters
    ("Tr0ub4dor", "p4ssw0rd"), or mixed case with digits ("Hunter2", "xK9-mQ2-vL7").
    "pat-2025", "postgres15" and "k8s" are names (too short for letters round digits)."""
    if not any(c.isdigit() for c in part):
        return False
    mixed_case = part.lower() != part != part.upper()
    return mixed_case or (len(part) >= 5 and bool(_DIGIT_IN_WORD.search(part)))


def is_allowed(value: str) -> bool:
    """A placeholder, a reference, or a value that is public by design."""
    return (
        not value
        or _is_placeholder(value)
        or _is_reference(value)
        or bool(_PUBLIC_PREFIX.match(value))
    )


def _entropy(value: str) -> float:
    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def b64_text(value: str) -> bytes | None:
    """The decoded bytes when `value` is base64 of printable text, else None."""
    if len(value) < 8 or not _B64ISH.fullmatch(value):
        return None
    padded = value + "=" * (-len(value) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    if raw and all(32 <= b < 127 or b in (9, 10, 13) for b in raw):
        return raw
    return None


def _is_b64_of_words(value: str) -> bool:
    """Base64 of a sentence or of JSON (a JWT header alone): text, not key material."""
    raw = b64_text(value)
    if raw is None:
        return False
    if raw.lstrip()[:1] in (b"{", b"["):
        return True
    letters = sum(chr(b).isalpha() or b == 32 for b in raw)
    return b" " in raw and b":" not in raw and letters >= 0.8 * len(raw)


# Characters of machine-made keys (base64, base64url, hex, url-encoding, "base64:" prefixes).
_TOKEN_ALPHABET = re.compile(r"[A-Za-z0-9+/=_\-.~%:]+")
# The parts of a name: "PKCS", "7", "Private", "Key", "Types".
_NAME_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_VOWEL = re.compile(r"[aeiouy]", re.I)


def _is_identifier(value: str) -> bool:
    """A name made of words (a type, a class): "PKCS7PrivateKeyTypes", "AuthTokenProvider".

    Every lowercase part is a pronounceable 3+ letters, acronyms are short and digits few:
    about 1 in 1,000 random 16-character keys has that shape, none of 32+.
    """
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", value):
        return False
    core = value.replace("_", "").replace(".", "")
    parts = _NAME_PARTS.findall(core)
    if sum(len(p) for p in parts if p.isdigit()) > 3:
        return False
    for part in parts:
        if part.isupper():
            if len(part) > 6:
                return False
        elif not part.isdigit() and (len(part) < 3 or not _VOWEL.search(part)):
            return False
    return len(parts) <= 2 or len(parts) * 3.5 <= len(core)


def looks_random(value: str, min_len: int = 16) -> bool:
    """A machine-made key: long, mixed, high-entropy, and not a hash/id/path/word form."""
    if len(value) < min_len or is_allowed(value) or is_path(value):
        return False
    if not _TOKEN_ALPHABET.fullmatch(value) or _is_identifier(value):
        return False
    if HEX.fullmatch(value):  # hex keys: need both digits and letters, like real ones
        core = value[2:] if value.startswith("0x") else value
        return any(c.isdigit() for c in core) and any(c.isalpha() for c in core)
    if _UUID.fullmatch(value):  # named as a key/token (Heroku keys are UUIDs)
        return True
    if WORDY.fullmatch(value) or _is_b64_of_words(value):
        return False
    digits = sum(c.isdigit() for c in value)
    upper = sum(c.isupper() for c in value)
    lower = sum(c.islower() for c in value)
    if upper + lower < 2:  # digits and symbols only: dates, numbers, ranges
        return False
    if not digits and (min(upper, lower) < 3 or len(value) < 20):
        return False
    if "/" in value and (is_pathlike(value) or all(map(WORDY.fullmatch, value.split("/")))):
        return False  # a path, or words between slashes ("Token/Bot/ApiKey")
    return _entropy(value) >= 3.0


_FILE_EXT = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_PATH_WORD = re.compile(r"[a-z][a-z0-9_\-]{2,}|\d{1,4}")


def is_pathlike(value: str) -> bool:
    """A path with a file extension or two word segments ("uploads/2024/report.pdf").

    Base64 never holds a dot, and two lowercase words are rare in a random key.
    """
    if _FILE_EXT.search(value):
        return True
    return sum(bool(_PATH_WORD.fullmatch(part)) for part in value.split("/")) >= 2


# Whitespace, braces, brackets, quotes, backslashes, pipes: code, templates or a sentence.
_NOT_IN_SECRET = re.compile(r"[\s{}\[\]<>\\|\"']")


def looks_secretish(value: str) -> bool:
    """A literal assigned to a token/secret name: random, or a made-up string with digits."""
    if len(value) < 8 or is_allowed(value) or is_path(value) or _MEASURE.fullmatch(value):
        return False
    core = value.rstrip("=")  # base64 padding, or an "expires_in=" that is not a value
    if core != value and (WORDY.fullmatch(core) or _is_identifier(core)):
        return False
    if _ALGORITHM.fullmatch(value) or _NOT_IN_SECRET.search(value) or _is_identifier(value):
        return False
    if looks_random(value, 16):
        return True
    if WORDY.fullmatch(value) or _UUID.fullmatch(value) or _is_b64_of_words(value):
        return False
    has_alpha = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(c in "!@#$%^&*+/=?~" for c in value)
    return has_alpha and (has_digit or has_symbol)


def password_literal(value: str, min_len: int = 4) -> bool:
    """A value written where a password goes: anything that is not a placeholder/reference."""
    if not min_len <= len(value) <= 256 or is_allowed(value) or is_path(value):
        return False
    return not (value.isdigit() and len(value) < 4)


# A word closed by "!" or "?" ends a sentence ("the password is wrong!"), not a password.
_EXCLAIMED_WORD = re.compile(r"[^\W\d_]+[!?]+")
# No word is this long: a run of letters this long is made up ("correcthorsebatterystaple").
LONGEST_WORD = 16
PIN_DIGITS = 6


def looks_like_password(value: str) -> bool:
    """A password stated in prose: letters with digits or symbols ("hunter2!", "Tr0ub4dor&3"),
    digits alone of a PIN's length or more ("84736251"), or letters alone, longer than a word."""
    if not password_literal(value, 6):
        return False
    if value.isdigit():  # before the measures, which take a bare number for one
        return len(value) >= PIN_DIGITS
    if _MEASURE.fullmatch(value) or CODE.search(value) or _ALGORITHM.fullmatch(value):
        return False
    if _EXCLAIMED_WORD.fullmatch(value):
        return False
    if value.isalpha():
        return len(value) > LONGEST_WORD
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    symbols = sum(not c.isalnum() and c not in "-_.'" for c in value)
    return letters >= 2 and (digits >= 1 or symbols >= 1)


# Punctuation that ends a sentence or a quotation, not a value ("!" and "?" may be in it).
TRAILING = ".,;:)]}>\"'`"
