"""Secret detection for the write gate: the detector, reading the rules in `secret_rules`.

    find_secrets(text) -> list[Finding]     each Finding(kind, start, end) spans a secret value
    redact(text) -> (text, kinds)           each secret replaced by ``[REDACTED:kind]``
    find_in_parts(parts) -> [(kind, parts)] the secrets of a record read as a whole
    screening_copy(text) -> (copy, origin)  the text as it is read (below)

Every text is read as a person would see it, not as its characters are encoded: its
screening copy leaves out ``[REDACTED:...]`` markers (a marker excuses itself, never what
stands next to it), invisible characters (format characters such as zero-width spaces and
soft hyphens) and Markdown emphasis (``**Password:**``), reads a Markdown table row's bars
as colons and HTML entities as what they show, NFKC-normalises the rest (fullwidth
letters) and reads Cyrillic and Greek look-alikes as the Latin letters they imitate (a
Cyrillic "АКІА"); spans are given in the text that was sent. A record (a memory's fields,
a text and what is appended to it) is read joined by newlines, and glued where its parts
meet, so that a title naming a credential over its value, or half a key in each part, is
found too. A text is also read with its line breaks left out where they cut a run of key
characters: a terminal or a mail client that wraps at a fixed width cuts a long key anywhere.

Why our own rules and not a library (measured on ../shared/bench/secrets, 150 cases):

- detect-secrets 1.5.0, default plugins, as its own ``scan_file`` runs them: precision 0.909,
  recall 0.778 (misses Anthropic, Google, DigitalOcean, Databricks, Shopify and Slack app
  tokens, passwords in URLs, prose, ``curl -u`` and Basic headers; flags placeholders,
  Stripe publishable keys, a lockfile hash); its reported value covers the whole secret in
  43 of 70 refusals. Time: 3.0 ms mean per short case (p95 7.9 ms), 21 ms for an
  8,000-character one-line text and 90 ms for one of 105 lines: it runs ~27 plugins and a
  filter chain per line in Python. Seven selected plugins without the entropy ones: recall
  0.53, still 16-40 ms on 8,000 characters. bc-detect-secrets 1.5.52 (the Bridgecrew fork)
  behaves the same way; Microsoft's secret masker (1.0.0b4, beta) knows mostly Azure keys.
  Every write passes the gate, so a library that is wrong one time in five and costs tens
  of milliseconds costs more than it gives. Its ideas (keyword + entropy, vendor prefixes,
  placeholder filters) and the public rule sets of gitleaks and detect-secrets are what
  these rules are written from.
- These rules (bench/bench_secrets.py): precision 1.000, recall 1.000, no false positive
  on the 60 clean cases, every refusal's span covering its whole secret. 0.07 ms mean per
  case (p95 0.22 ms); on 8,000 characters (the longest memory) 0.36 ms for ordinary prose,
  0.65 ms for config lines, about 1 ms for prose dense with credential words, at most
  ~4.5 ms for adversarial repetitions ("password=" x 900). The bench is a check, not the
  target: the rules follow the formats; the tests generate their own secrets (a case for
  every line of the table) and a property test feeds arbitrary text.
  Read as records: no false positive on the 3,540 ordered pairs of clean cases (joined and
  glued); recall 1.000 on the positives disguised (a zero-width space or soft hyphen
  inside, fullwidth, Cyrillic or Greek look-alike letters, a fake marker in front) and
  split in two at the middle of the secret. The screening copy costs one check on ASCII
  text without a marker.

How a text is read, cheapest first, so ordinary prose costs a few substring searches:

1. Private-key blocks (PEM, OpenSSH, PGP, PuTTY), also with escaped ``\\n`` inside JSON,
   and a private key's base64 body without its BEGIN/END lines (its DER opens with a
   version number; certificates and public keys do not).
2. Vendor tokens with a known prefix or shape (the table in `secret_rules`, one line per
   format); each runs only when its literal hint occurs in a long run of non-space characters.
3. Structures: JWTs, URLs with a password, Authorization/Basic/Bearer, cookies, ``curl -u``
   and other command lines, .pgpass, XML settings, manifest env entries (``name:`` over
   ``value:``), seed phrases.
4. Credential words (password, secret, token, key, ...): the name around the word decides
   the class, the value after it (assigned, stated in prose, or simply following) must look
   like a password or a random key. Hashes, ids, paths, versions, variable references and
   placeholders are allowed. A value alone on the line after its name counts too (also
   after a YAML block indicator, ``password: |``).

Overlapping findings are merged; the span is their union and the kind the most specific.
No pattern nests unbounded quantifiers, so no input makes a regex backtrack badly.
"""

from __future__ import annotations

import base64
import binascii
import functools
import html
import math
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from .secret_rules import (
    BODY_PLACEHOLDER,
    CODE_VARS,
    COMMAND_LINE_PASSWORDS,
    DOCUMENTED,
    END,
    FILL_STOP,
    LOOKALIKES,
    NOT_CREDENTIAL,
    PASSWORD_KEY_WORDS,
    PASSWORD_WORDS,
    PLACEHOLDER_WORDS,
    PLURAL_OK,
    PUBLIC_PREFIX,
    SECRET_KEY_QUALIFIERS,
    SECRET_WORDS,
    STEMS,
    STOPWORDS,
    VALUE_SUFFIXES,
    VENDOR_FORMATS,
    Shape,
    Token,
)

__all__ = ["Finding", "find_in_parts", "find_secrets", "redact", "screening_copy"]


@dataclass(frozen=True, slots=True)
class Finding:
    """A credential found in a text: its kind and the span ``[start, end)`` of its value."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Hit:
    kind: str
    start: int
    end: int
    rank: int  # lower is more specific: it names a merged finding


# --- the screening copy: what a reader sees, not how the characters are encoded ----------

# A redaction marker (ours, "[REDACTED]" or "<REDACTED>"): it excuses itself and nothing
# next to it, so the copy leaves it out and screens what stands around it as if joined.
_MARKER = re.compile(r"[\[<](?i:redacted)(?::[A-Za-z0-9_.\-]{0,40})?[\]>]")
# Characters nobody sees: every format character (Cf: soft hyphen, zero-width space and
# joiners, word joiner, BOM, bidi controls, tags) and the blank fillers and selectors.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufe00-\ufe0f"
    "\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]"
)
# Markdown emphasis around a word ("**Password:** x", "*DB password*"): formatting, not
# text. Only one or two stars that open or close a word; "a*b", "****" and "x***" stay.
# (The leading (?=\*) spares the lookbehinds at every other character.)
_EMPHASIS = re.compile(
    r"(?=\*)(?:(?<![^\s(\[>|])\*{1,2}(?=[^\s*])|(?<=[^\s*])\*{1,2}(?![^\s.,;:!?)\]|]))"
)
# An HTML entity: Markdown shows `&quot;` as a quote and `&#95;` as an underscore, and
# text copied from HTML source or exported from a wiki keeps them. Read as what they show.
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_SKIPPED = re.compile(
    f"{_MARKER.pattern}|{_INVISIBLE.pattern}|{_EMPHASIS.pattern}|(?P<entity>{_ENTITY.pattern})"
)


def _table_cells(text: str) -> str:
    """`text` with each Markdown table row's bars read as colons, so that its cells read as
    "name: value", like the line they stand for (the same length: no origin needed)."""
    if "|" not in text:
        return text
    lines = text.split("\n")
    return "\n".join(
        line.replace("|", ":") if line.lstrip(" \t").startswith("|") else line for line in lines
    )


def _folded(text: str) -> str:
    """`text` with Cyrillic and Greek look-alikes read as Latin letters, one for one (so the
    origin of each character stays where it was). A search and a replace per letter present
    cost a tenth of `str.translate`, which looks each character up in Python."""
    if text.isascii():
        return text
    for lookalike, latin in LOOKALIKES.items():
        if lookalike in text:
            text = text.replace(lookalike, latin)
    return text


def screening_copy(text: str) -> tuple[str, list[int] | None]:
    """The text as the gate reads it, and where each of its characters came from.

    Markers, invisible characters and Markdown emphasis are left out, table bars read as
    colons and HTML entities as their characters, every character is NFKC-normalised
    (fullwidth "ｇｈｐ＿" reads "ghp_") and look-alike letters read as Latin (Cyrillic
    "АКІА" reads "AKIA"), so copy-paste, editors, chat clients and Markdown cannot hide a
    credential. `origin[i]` is the index in `text` of the character that gave
    `copy[i]`; None when the copy matches the text character for character (plain ASCII
    without a marker: the common case).
    """
    plain = text.isascii() or (
        unicodedata.is_normalized("NFKC", text) and not _INVISIBLE.search(text)
    )
    if (
        plain
        and not (("[" in text or "<" in text) and _MARKER.search(text))
        and not ("*" in text and _EMPHASIS.search(text))
        and not ("&" in text and _ENTITY.search(text))
    ):
        return _table_cells(_folded(text)), None
    out: list[str] = []
    origin: list[int] = []
    pos = 0
    for skipped in [*_SKIPPED.finditer(text), None]:
        end = skipped.start() if skipped else len(text)
        segment = text[pos:end]
        if segment.isascii() or unicodedata.is_normalized("NFKC", segment):
            out.append(segment)
            origin.extend(range(pos, end))
        else:
            for index in range(pos, end):
                normal = unicodedata.normalize("NFKC", text[index])
                out.append(normal)
                origin.extend([index] * len(normal))
        if skipped is not None and skipped["entity"]:
            shown = unicodedata.normalize("NFKC", html.unescape(skipped[0]))
            out.append(shown)  # an unknown name stays as it was written
            origin.extend(
                range(skipped.start(), skipped.end())
                if shown == skipped[0]
                else [skipped.start()] * len(shown)
            )
        pos = skipped.end() if skipped else end
    return _table_cells(_folded("".join(out))), origin


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
# The same, for the random body of a vendor token.
_BODY_PLACEHOLDER = re.compile(BODY_PLACEHOLDER)
# The same character eight times running: "T00000000", "aaaaaaaa" (not in a random body).
_RUN = re.compile(r"(.)\1{7,}")
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

_HEX = re.compile(r"(?:0x)?[0-9a-f]+|(?:0x)?[0-9A-F]+")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Identifiers made of words: camelCase, PascalCase, snake_case, kebab-case, dotted.
_WORDY = re.compile(r"[A-Za-z][a-z]*(?:[-_./:][A-Za-z][a-z]*|[A-Z][a-z]+)*|[A-Z]+(?:[-_][A-Z]+)*")
# Code, not a literal: calls, subscripts, attribute chains (``args.password``).
_CODE = re.compile(r"[()\[\]]|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
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


def _is_path(value: str) -> bool:
    """A path or URL: "~/x", "./x", "C:\\x", "https://x"; "/x/y" only with words or a file."""
    return bool(_PATH.match(value)) or (value[:1] == "/" and _is_pathlike(value))


def _is_placeholder(value: str) -> bool:
    if any(doc in value for doc in DOCUMENTED) or value.rstrip("=").lower() in STOPWORDS:
        return True
    return bool(_PLACEHOLDER.search(value) or _RUN.search(value))


def _is_reference(value: str) -> bool:
    return bool(_REFERENCE.match(value))


def _is_allowed(value: str) -> bool:
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


def _b64_text(value: str) -> bytes | None:
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
    raw = _b64_text(value)
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


def _looks_random(value: str, min_len: int = 16) -> bool:
    """A machine-made key: long, mixed, high-entropy, and not a hash/id/path/word form."""
    if len(value) < min_len or _is_allowed(value) or _is_path(value):
        return False
    if not _TOKEN_ALPHABET.fullmatch(value) or _is_identifier(value):
        return False
    if _HEX.fullmatch(value):  # hex keys: need both digits and letters, like real ones
        core = value[2:] if value.startswith("0x") else value
        return any(c.isdigit() for c in core) and any(c.isalpha() for c in core)
    if _UUID.fullmatch(value):  # named as a key/token (Heroku keys are UUIDs)
        return True
    if _WORDY.fullmatch(value) or _is_b64_of_words(value):
        return False
    digits = sum(c.isdigit() for c in value)
    upper = sum(c.isupper() for c in value)
    lower = sum(c.islower() for c in value)
    if upper + lower < 2:  # digits and symbols only: dates, numbers, ranges
        return False
    if not digits and (min(upper, lower) < 3 or len(value) < 20):
        return False
    if "/" in value and (_is_pathlike(value) or all(map(_WORDY.fullmatch, value.split("/")))):
        return False  # a path, or words between slashes ("Token/Bot/ApiKey")
    return _entropy(value) >= 3.0


_FILE_EXT = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_PATH_WORD = re.compile(r"[a-z][a-z0-9_\-]{2,}|\d{1,4}")


def _is_pathlike(value: str) -> bool:
    """A path with a file extension or two word segments ("uploads/2024/report.pdf").

    Base64 never holds a dot, and two lowercase words are rare in a random key.
    """
    if _FILE_EXT.search(value):
        return True
    return sum(bool(_PATH_WORD.fullmatch(part)) for part in value.split("/")) >= 2


# Whitespace, braces, brackets, quotes, backslashes, pipes: code, templates or a sentence.
_NOT_IN_SECRET = re.compile(r"[\s{}\[\]<>\\|\"']")


def _looks_secretish(value: str) -> bool:
    """A literal assigned to a token/secret name: random, or a made-up string with digits."""
    if len(value) < 8 or _is_allowed(value) or _is_path(value) or _MEASURE.fullmatch(value):
        return False
    core = value.rstrip("=")  # base64 padding, or an "expires_in=" that is not a value
    if core != value and (_WORDY.fullmatch(core) or _is_identifier(core)):
        return False
    if _ALGORITHM.fullmatch(value) or _NOT_IN_SECRET.search(value) or _is_identifier(value):
        return False
    if _looks_random(value, 16):
        return True
    if _WORDY.fullmatch(value) or _UUID.fullmatch(value) or _is_b64_of_words(value):
        return False
    has_alpha = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(c in "!@#$%^&*+/=?~" for c in value)
    return has_alpha and (has_digit or has_symbol)


def _password_literal(value: str, min_len: int = 4) -> bool:
    """A value written where a password goes: anything that is not a placeholder/reference."""
    if not min_len <= len(value) <= 256 or _is_allowed(value) or _is_path(value):
        return False
    return not (value.isdigit() and len(value) < 4)


def _looks_like_password(value: str) -> bool:
    """A password stated in prose: letters with digits or symbols ("hunter2!", "Tr0ub4dor&3")."""
    if not _password_literal(value, 6) or _MEASURE.fullmatch(value) or _CODE.search(value):
        return False
    if _ALGORITHM.fullmatch(value):
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    symbols = sum(not c.isalnum() and c not in "-_.'" for c in value)
    return letters >= 2 and (digits >= 1 or symbols >= 1)


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


def _private_keys(text: str) -> Iterator[_Hit]:
    if "PRIVATE KEY" in text:
        for m in _PEM.finditer(text):
            body = re.sub(r"\\+[nr]|\s", "", m["body"])
            if len(body) < 64 or _PEM_PLACEHOLDER.search(body):
                continue  # a header shown as a format, or an elided body
            label = m["label"].strip()
            kind = {"OPENSSH": "openssh-private-key", "PGP": "pgp-private-key"}.get(
                label, "openssh-private-key" if body.startswith("b3BlbnNzaC1rZXkt") else ""
            )
            yield _Hit(kind or "pem-private-key", m.start(), m.end(), 0)
    if "LS0tLS1CRUdJTi" in text:
        for m in _PEM_B64.finditer(text):
            raw = m[0][: len(m[0]) // 4 * 4]
            try:
                head = base64.b64decode(raw[:200])
            except (binascii.Error, ValueError):
                continue
            if b"PRIVATE KEY" in head:
                yield _Hit("pem-private-key", m.start(), m.end(), 0)
    for pattern in _KEY_BODIES:
        for m in pattern.finditer(text):
            body = re.sub(r"\\+[nr]|\s", "", m[0])
            if _starts_word(text, m.start()) and _is_private_key_body(body):
                yield _Hit("pem-private-key", m.start(), m.end(), 0)
    if "PuTTY-User-Key-File" in text:
        for m in _PUTTY.finditer(text):
            yield _Hit("putty-private-key", m.start(), m.end(), 0)


# --- 2. vendor tokens with a known prefix or shape ----------------------------------------


@dataclass(frozen=True, slots=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]  # group `v` is the secret; `b`, if any, its random body
    hints: tuple[str, ...]  # the rule runs only when one of these literals occurs
    check: Callable[[str], bool] | None  # a further test of the body
    runs_ok: bool  # the format itself repeats a character (Twitter's AAAA...)
    word_start: bool  # the secret starts a word (not when a fixed context precedes)


def _random_body(body: str) -> bool:
    return _looks_random(body, 16)


def _discord_id(token: str) -> bool:
    """The first part of a Discord bot token is the bot's numeric id in base64."""
    raw = _b64_text(token.split(".", 1)[0])
    return raw is not None and raw.isdigit()


def _sas_signature(value: str) -> bool:
    """A SAS `sig=` is url-encoded base64: a percent sign, or a random value of 30+."""
    return "%" in value or _looks_random(value, 30)


# The further tests a format may name (`check` in secret_rules).
_CHECKS: dict[str, Callable[[str], bool]] = {
    "random": _random_body,
    "discord-id": _discord_id,
    "sas": _sas_signature,
}


def _compiled(entry: Token | Shape) -> _Rule:
    """A format of the table, ready to run.

    A token's start is checked in Python (`_starts_word`): a leading lookbehind would keep
    the regex engine from searching for the literal prefix. Without hints, a token's prefix
    is its hint when it is a literal.
    """
    check = _CHECKS[entry.check] if entry.check else None
    hints = tuple(entry.hints.split())
    if isinstance(entry, Shape):
        return _Rule(entry.kind, re.compile(entry.pattern), hints, check, False, entry.word_start)
    if not hints and re.escape(entry.prefix).replace("\\-", "-") == entry.prefix:
        hints = (entry.prefix,)
    pattern = re.compile(rf"(?P<v>(?:{entry.prefix})(?P<b>{entry.body})){END}")
    return _Rule(entry.kind, pattern, hints, check, entry.runs_ok, True)


_VENDOR_RULES = tuple(_compiled(entry) for entry in VENDOR_FORMATS)

# Each distinct hint with the rules it lets run; rules without hints always run.
_HINT_RULES: dict[str, tuple[int, ...]] = {}
for _index, _each in enumerate(_VENDOR_RULES):
    for _hint in _each.hints:
        _HINT_RULES[_hint] = (*_HINT_RULES.get(_hint, ()), _index)
_ALWAYS = tuple(i for i, rule in enumerate(_VENDOR_RULES) if not rule.hints)
# A body of lowercase words ("your-bot-token", "yourtokenhere") is a placeholder, not a key.
_FAKE_BODY = re.compile(r"[-_]?[a-z]+(?:[-_][a-z]+)*[-_]?")


def _starts_word(text: str, start: int) -> bool:
    """No letter or digit just before `start` (an escaped "\\n" in JSON counts as a break)."""
    return start == 0 or not text[start - 1].isalnum() or (start >= 2 and text[start - 2] == "\\")


def _vendor_tokens(text: str) -> Iterator[_Hit]:
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
        if rule.pattern.search(runs) is None:
            continue
        for m in rule.pattern.finditer(text):
            value = m["v"]
            body = m.groupdict().get("b") or value
            if rule.word_start and not _starts_word(text, m.start("v")):
                continue
            if value in DOCUMENTED:
                continue
            if _FAKE_BODY.fullmatch(body) or _BODY_PLACEHOLDER.search(body):
                continue
            if not rule.runs_ok and (_RUN.search(body) or body.lower() in STOPWORDS):
                continue
            if rule.check is None or rule.check(body):
                yield _Hit(rule.kind, m.start("v"), m.end("v"), 1 + index)


_STRUCT_RANK = 1 + len(_VENDOR_RULES)


# --- 3. structures: JWTs, URLs, headers, command lines --------------------------------------

# JWT (JWS or JWE): base64url JSON header "eyJ...", then 2 or 4 more dot-separated parts.
_JWT = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}(?:\.[A-Za-z0-9_\-]*){2,4}")
# A URL with a password: scheme://user:password@host (the password may hold '@').
_URL_PASSWORD = re.compile(
    r"://(?P<user>[^\s:/?#@'\"<>]{0,128}):(?P<v>[^\s/'\"<>]{1,256})@(?=[A-Za-z0-9\[._%-])"
)
# Authorization: Basic <base64 of user:password>.
_BASIC = re.compile(r"\b[Bb]asic[ \t]+(?P<v>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")
# Bearer <token> (in a header or not).
_BEARER = re.compile(r"\b[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)")
# Authorization: Token/Bot/SSWS/ApiKey <value>, or a bare value.
_AUTH_HEADER = re.compile(
    r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?i:token|bot|ssws|apikey|api-key|key|sso-key|gapi|splunk)[ \t]+)?"
    r"(?P<v>[A-Za-z0-9\-._~+/]{16,}=*)"
)
# curl/wget -u or --user, httpie -a or --auth: user:password.
_CURL_USER = re.compile(
    r"(?:^|[\s'\"])(?:-u|--user|-a|--auth)(?:[ \t]+|=)?[\"']?[^\s:'\"]{1,128}"
    r":(?P<v>[^\s'\"]{1,256})"
)
# Passwords given on a command line or in a call (the table in secret_rules).
_CLI_PASSWORDS = tuple(
    (hints, re.compile(command) if command else None, re.compile(value))
    for hints, command, value in COMMAND_LINE_PASSWORDS
)
# Session cookies: every random value on a "Cookie:" or "Set-Cookie:" line.
_COOKIE_HEADER = re.compile(r"(?i:set-cookie|cookie)[ \t]*:")
_COOKIE_VALUE = re.compile(r"[ \t;=:](?P<v>[A-Za-z0-9%+/_\-.]{16,}={0,2})")
# .pgpass: host:port:database:user:password, one per line.
_PGPASS = re.compile(r"(?m)^[\w.\-*]+:(?:\d{2,5}|\*):[\w.\-*]+:[\w.\-@*]+:(?P<v>[^\s:]\S*)$")
# XML/.NET settings: <add key="ApiKey" value="..."/>, name="DbPassword" value="...".
_KEY_VALUE_ATTR = re.compile(
    r"""\b(?:key|name)[ \t]*=[ \t]*["'](?P<name>[\w.:\-]{1,80})["'][ \t]+value[ \t]*=[ \t]*"""
    r"""["'](?P<v>[^"'\r\n]{1,512})["']""",
    re.I,
)
# The same as an entry of a manifest: Kubernetes `- name: DB_PASSWORD` over `value: x`, an
# ECS task's {"name": "DB_PASSWORD", "value": "x"}.
_NAME_VALUE_PAIR = re.compile(
    r"""\b(?:name|key)["']?[ \t]*[:=][ \t]*["']?(?P<name>[\w.:\-]{1,80})["']?[ \t]*,?[ \t]*"""
    r"""(?:\r?\n[ \t]*)?["']?value["']?[ \t]*[:=][ \t]*"""
    r"""(?:"(?P<dq>[^"\r\n]{1,512})"|'(?P<sq>[^'\r\n]{1,512})'|(?P<uv>[^\s"',}\]]{1,512}))""",
    re.I,
)
# A login given as "user / password": "login: deploy / Hunter2!", "creds: admin/S3cret".
_USER_SLASH_PASSWORD = re.compile(
    r"\b(?i:login|logins|credentials|creds|username|user)(?:[ \t]*(?:is|are|:|=)[ \t]*|[ \t]+)"
    r"[\"'`]?[\w.@\-]{2,64}[ \t]*/[ \t]*[\"'`]?(?P<v>[^\s\"'`/]{6,128})"
)
# A wallet's recovery words: "seed phrase: <12 or 24 lowercase words>".
_SEED_PHRASE = re.compile(
    r"(?i:seed[ \t]+phrase|recovery[ \t]+phrase|mnemonic|secret[ \t]+recovery[ \t]+phrase)"
    r"[^\r\n\w]{0,12}(?:is[ \t]+)?[\"'`]?(?P<v>[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})\b"
)
# SQL: CREATE/ALTER USER ... IDENTIFIED BY 'password'.
_IDENTIFIED_BY = re.compile(
    r"(?i:identified[ \t]+by)[ \t]+(?P<q>['\"])(?P<v>[^'\"\r\n]{1,256})(?P=q)"
)
# A value named after it: "use hunter2! as the password", "<key> is the API key for staging";
# found at " as "/" is ", the value is the word before.
_NAMED_AFTER = re.compile(
    r"[ \t](?:as|is|was)[ \t]+(?:(?:the|my|our|your|a|an|its)[ \t]+)?"
    r"(?:(?:new|current|temporary|temp|admin|root|db|database|wifi|wi-fi|vpn|router|login"
    r"|account|master|staging|prod|production|dev|test|ci|deploy|api|access|service|bot|app"
    r"|[A-Z][A-Za-z0-9\-]{1,19})[ \t]+){0,2}?"
    r"(?P<name>(?i:password|passphrase|api[ _\-]?key|access[ _\-]?key|secret[ _\-]?key"
    r"|key|token|secret))\b"
)
# An AWS secret access key: 40 base64 characters, found near an access key id.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")

# Punctuation that ends a sentence or a quotation, not a value ("!" and "?" may be in it).
_ENCODED_WORDS = re.compile(r"[A-Za-z]+(?:%20[A-Za-z]+)+")
_TRAILING = ".,;:)]}>\"'`"


def _jwt_ok(token: str) -> bool:
    parts = token.split(".")
    if len(parts) < 3:
        return False
    header = _b64_text(parts[0])
    if header is None or not (b'"alg"' in header or b'"enc"' in header or b'"typ"' in header):
        return False
    if any(doc in token for doc in DOCUMENTED):
        return False
    if len(parts) == 5:  # JWE: the IV and the tag are there ("eyJ...." is an elided token)
        return len(parts[2]) >= 16 and len(parts[4]) >= 16
    return len(parts[2]) >= 16


def _structures(text: str, lower: str) -> Iterator[_Hit]:
    rank = _STRUCT_RANK
    if "eyJ" in text:
        for m in _JWT.finditer(text):
            token = m[0].rstrip(".")
            if _starts_word(text, m.start()) and _jwt_ok(token):
                yield _Hit("jwt", m.start(), m.start() + len(token), rank)
    if "://" in text:
        for m in _URL_PASSWORD.finditer(text):
            password = m["v"]
            if _ENCODED_WORDS.fullmatch(password) or ("," in password and ":" in password):
                continue  # "a%20secret": a sentence; "h1:1,h2:2": a multi-host list
            if _password_literal(password, 4) and password != m["user"]:
                yield _Hit("url-password", m.start("v"), m.end("v"), rank + 1)
    if "basic" in lower:
        for m in _BASIC.finditer(text):
            raw = _b64_text(m["v"])
            if raw is not None and b":" in raw:
                password = raw.split(b":", 1)[1].decode("ascii", "replace")
                if password and not _is_allowed(password):
                    yield _Hit("basic-auth-header", m.start("v"), m.end("v"), rank + 2)
    if "bearer" in lower:
        for m in _BEARER.finditer(text):
            if _looks_random(m["v"].rstrip("="), 16):
                yield _Hit("bearer-token", m.start("v"), m.end("v"), rank + 3)
    if "authorization" in lower:
        for m in _AUTH_HEADER.finditer(text):
            value = m["v"]
            if value.lower() not in ("basic", "bearer") and _looks_random(value.rstrip("="), 16):
                yield _Hit("authorization-header", m.start("v"), m.end("v"), rank + 3)
    flags = " -" in text  # most command lines pass the password as a flag
    if flags:
        for m in _CURL_USER.finditer(text):
            yield from _literal_hit("cli-password", text, m.start("v"), m.end("v"), rank + 4)
    for hints, command, value in _CLI_PASSWORDS:
        if (flags or command is None) and any(hint in text for hint in hints):
            for m in _cli_values(text, command, value):
                yield from _literal_hit("cli-password", text, m.start("v"), m.end("v"), rank + 4)
    if "cookie" in lower:
        for header in _COOKIE_HEADER.finditer(text):
            line_end = text.find("\n", header.end())
            line_end = len(text) if line_end < 0 else line_end
            for m in _COOKIE_VALUE.finditer(text, header.end() - 1, line_end):
                if _looks_random(m["v"], 16):
                    yield _Hit("session-cookie", m.start("v"), m.end("v"), rank + 4)
    if text.count(":") >= 4:
        for m in _PGPASS.finditer(text):
            if _password_literal(m["v"]):
                yield _Hit("password-assignment", m.start("v"), m.end("v"), rank + 5)
    if "value" in lower:
        for m in _KEY_VALUE_ATTR.finditer(text):
            cls = _name_class(m["name"], "")
            if cls is not None and _judge(cls, "assign", m["v"], True, text, m.end("v")):
                kind = "password-assignment" if cls == "password" else "secret-assignment"
                yield _Hit(kind, m.start("v"), m.end("v"), rank + 5)
        for m in _NAME_VALUE_PAIR.finditer(text):
            cls = _name_class(m["name"], "")
            group = next(g for g in ("dq", "sq", "uv") if m[g] is not None)
            quoted, value = group != "uv", m[group]
            if cls is not None and _judge(cls, "assign", value, quoted, text, m.end(group)):
                kind = "password-assignment" if cls == "password" else "secret-assignment"
                yield _Hit(kind, m.start(group), m.end(group), rank + 5)
    if "/" in text:
        for at in _occurrences(lower, ("login", "cred", "user")):
            pair = _USER_SLASH_PASSWORD.match(text, at)
            value = pair["v"].rstrip(_TRAILING) if pair else ""
            if pair and _looks_like_password(value):
                start = pair.start("v")
                yield _Hit("password-in-prose", start, start + len(value), rank + 6)
    if "phrase" in lower or "mnemonic" in lower:
        for m in _SEED_PHRASE.finditer(text):
            yield _Hit("seed-phrase", m.start("v"), m.end("v"), rank + 5)
    if "identified" in lower:
        for m in _IDENTIFIED_BY.finditer(text):
            if _password_literal(m["v"]):
                yield _Hit("password-assignment", m.start("v"), m.end("v"), rank + 5)
    if _has_stem(lower):
        for at in _occurrences(lower, (" as ", " is ", " was ")):
            named = _NAMED_AFTER.match(text, at)
            if named is None:
                continue
            end = named.start()
            start = max(text.rfind(" ", 0, end), text.rfind("\n", 0, end), end - 256) + 1
            value = text[start:end].strip("\"'`(").rstrip(",;:")
            if not value:
                continue
            start = text.index(value, start)
            if named["name"].lower().startswith("pass"):
                if _looks_like_password(value):
                    yield _Hit("password-in-prose", start, start + len(value), rank + 6)
            elif _looks_random(value, 16):
                yield _Hit("high-entropy-secret", start, start + len(value), rank + 6)
    if "basic" in lower or _AUTH_WORD.search(lower):
        for m in _B64_TOKEN.finditer(text):
            if _is_b64_credentials(m[0]):
                yield _Hit("basic-auth-header", m.start(), m.end(), rank + 2)


def _cli_values(
    text: str, command: re.Pattern[str] | None, value: re.Pattern[str]
) -> Iterator[re.Match[str]]:
    """Each value: anywhere, or on the rest of the line of each command (200 characters)."""
    if command is None:
        yield from value.finditer(text)
        return
    for cmd in command.finditer(text):
        line_end = text.find("\n", cmd.end())
        end = min(len(text) if line_end < 0 else line_end, cmd.end() + 200)
        yield from value.finditer(text, cmd.end(), end)


def _occurrences(lower: str, words: tuple[str, ...]) -> Iterator[int]:
    """Where each word starts in the lowercased text (a regex .match() then runs there)."""
    for word in words:
        at = lower.find(word)
        while at != -1:
            yield at
            at = lower.find(word, at + 1)


def _has_stem(lower: str) -> bool:
    return "pass" in lower or "key" in lower or "token" in lower or "secret" in lower


_AUTH_WORD = re.compile(r"auth[\"' :=]")
# A standalone base64 token, for base64 of "user:password" near the word auth or basic.
_B64_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{8,256}={0,2}(?![A-Za-z0-9+/=])")
_CREDENTIAL_PAIR = re.compile(r"[\w.@+\-]{1,64}:[^\s:]{4,128}")


def _is_b64_credentials(value: str) -> bool:
    """Base64 of "user:password" (no spaces), with a password that is not a placeholder."""
    raw = _b64_text(value)
    if raw is None:
        return False
    pair = raw.decode("ascii")
    return bool(_CREDENTIAL_PAIR.fullmatch(pair)) and not _is_allowed(pair.partition(":")[2])


def _literal_hit(kind: str, text: str, start: int, end: int, rank: int) -> Iterator[_Hit]:
    value = text[start:end].rstrip(_TRAILING)
    if _password_literal(value):
        yield _Hit(kind, start, start + len(value), rank)


def _aws_secret_near_key_id(text: str, hits: list[_Hit]) -> Iterator[_Hit]:
    """A 40-character base64 secret within a few lines after an AWS access key id."""
    for hit in hits:
        if hit.kind != "aws-access-key-id":
            continue
        window_end = min(len(text), hit.end + 300)
        for m in _AWS_SECRET.finditer(text, hit.end, window_end):
            value = m["v"]
            if not _HEX.fullmatch(value) and _looks_random(value, 40):
                yield _Hit("aws-secret-access-key", m.start(), m.end(), 1)


# --- 4. credential words and the value next to them ----------------------------------------

_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEGMENTS = re.compile(r"[_.\-]+")

# A value assigned to the name: `= v`, `: v`, `=> v`, `:= v`, `== v`, `("v")`, `>v<` (XML),
# after an optional closing quote of the name and an optional type (`password: str = ...`).
_ASSIGN = re.compile(
    r"""(?P<close>["'`\]]{0,2})[ \t]*
    (?::[ \t]*[A-Za-z_][\w.\[\]|, ]{0,40}?[ \t]+(?==[^=]))?
    (?P<op>:=|=>|->|==|=|:(?![:/])|>(?=[^<\r\n]{1,256}</)|\()
    [ \t]*
    (?:[rRbBuUfF]{0,2}"(?P<dq>[^"\r\n]{0,512})"
      |[rRbBuUfF]{0,2}'(?P<sq>[^'\r\n]{0,512})'
      |`(?P<bq>[^`\r\n]{0,512})`
      |(?P<uv>[^\s"'`,;<=]{1,512}={0,2}))?""",
    re.X,
)
# A value stated in prose: "<name> [for the router] is|was|:|= [now] <value>"; the words
# between must open with a preposition or pronoun ("password manager is" changes subject).
_PROSE = re.compile(
    r"""(?P<fill>[ \t]+(?i:for|of|to|on|at|in|from|with|we|i|you|they|he|she|that|which|here
    |there|now|today|currently|still|used|needed)\b(?:[ \t]+[^\s:=]{0,29}[^\s:=.!?;,]){0,3})?
    [ \t]*(?:[ \t](?i:is|was|are|remains|reads|became|to|(?:will|would|should|must)[ \t]+be
    |ha(?:s|ve)[ \t]+been)|[:=—–→⇒]|->)
    [ \t]+(?:(?i:now|still|currently|just|actually|(?:re)?set[ \t]+to|changed[ \t]+to
    |updated[ \t]+to)[ \t]+)?
    (?P<open>["'“‘`(]?)(?P<v>[^\s"'”’`]{1,256})""",
    re.X,
)
# A value right after the name: "token g9DW...", "--password hunter2", "PASSWORD 'x'".
_DIRECT = re.compile(r"""[ \t]+(?P<open>["'`]?)(?P<v>[^\s"'`,;)]{1,512})""")
_DIGIT = re.compile(r"\d")
_USERNAME = re.compile(r"[A-Za-z0-9_.@\-]{1,64}")
_NEXT_PARAM = re.compile(r"&[A-Za-z_][\w.\-]*=")
_BLOCK_SCALAR = re.compile(r"[|>][+\-]?")
_AFTER_NAME = frozenset(" \t\"'`]:=(>\r\n")
# A value alone on the line after its name: a title "staging DB password" over a text that
# is only the password, a YAML key whose value was put on the next line.
_NEXT_LINE = re.compile(
    r"[ \t]*:?[ \t]*\r?\n[ \t]*(?P<v>[^\s*#>|`\-=:][^\s=:]{0,255}={0,2})[ \t]*(?=\r?\n|$)"
)


def _ident_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    a, b = start, end
    while a > 0 and start - a < 80 and text[a - 1] in _IDENT_CHARS:
        a -= 1
    while b < len(text) and b - end < 80 and text[b] in _IDENT_CHARS:
        b += 1
    while a < b and text[a] in ".-":
        a += 1
    while b > a and text[b - 1] in ".-":
        b -= 1
    return a, b


@functools.lru_cache(maxsize=4096)
def _name_class(ident: str, before: str) -> str | None:
    """'password', 'secret' or 'key' when `ident` (with the word `before` it) names one."""
    segments = [s for s in _SEGMENTS.split(_CAMEL.sub("_", ident).lower()) if s]
    if not segments:
        return None
    *qualifiers, last = segments
    while qualifiers and last in VALUE_SUFFIXES:  # SECRET_KEY_BASE, token_value
        last = qualifiers.pop()
    prev_word = before.lower()
    if prev_word:
        qualifiers.insert(0, prev_word)
    if any(q in NOT_CREDENTIAL for q in qualifiers):
        return None
    if last.endswith("s") and not last.endswith("ss") and last not in PLURAL_OK:
        return None
    if last in PASSWORD_WORDS or last.endswith(("password", "passwd", "storepass", "keypass")):
        return "password"
    if last in SECRET_WORDS or last.endswith(("token", "secret", "apikey")):
        if last.endswith(("auth",)) and last != "auth":
            return None
        return "secret"
    if last in ("key", "keys"):
        near = qualifiers[-1] if qualifiers else ""
        if near in PASSWORD_KEY_WORDS:  # a Wi-Fi "network key", a VPN pre-shared key
            return "password"
        return "secret" if near in SECRET_KEY_QUALIFIERS else "key"
    return None


def _word_before(text: str, a: int) -> str:
    """The alphabetic word just before position `a` on the same line ("API" in "API key")."""
    i = a
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    j = i
    while j > 0 and i - j < 20 and text[j - 1].isalpha():
        j -= 1
    return text[j:i] if i < a else ""


def _value_after(text: str, b: int) -> tuple[str, int, int, bool] | None:
    """(mode, start, end, quoted) of the value that follows a name ending at `b`."""
    m = _ASSIGN.match(text, b)
    if m and m["op"]:
        for group in ("dq", "sq", "bq"):
            if m[group] is not None:
                return "assign", m.start(group), m.end(group), True
        if m["op"] == ":" and m["uv"] is not None and _BLOCK_SCALAR.fullmatch(m["uv"]):
            return _value_on_next_line(text, m.end("uv"))  # YAML `password: |`: next line
        if m["uv"] is not None and m["op"] != "(":
            query = _NEXT_PARAM.search(m["uv"])  # ?password=x&user=y: stop at "&user="
            end = m.start("uv") + query.start() if query else m.end("uv")
            return "assign", m.start("uv"), end, False
        return _value_on_next_line(text, b) if m["op"] == ":" else None
    m = _PROSE.match(text, b)
    if m:
        words = [w.strip("()[]'\"").lower() for w in (m["fill"] or "").split()]
        if FILL_STOP.intersection(words):
            return None
        return "prose", m.start("v"), m.end("v"), bool(m["open"])
    m = _DIRECT.match(text, b)
    if m:
        return "direct", m.start("v"), m.end("v"), bool(m["open"])
    return _value_on_next_line(text, b)


def _value_on_next_line(text: str, b: int) -> tuple[str, int, int, bool] | None:
    m = _NEXT_LINE.match(text, b)
    if m and _DIGIT.search(m["v"]) and any(c.isalpha() for c in m["v"]):
        return "line", m.start("v"), m.end("v"), False
    return None


def _judge(cls: str, mode: str, value: str, quoted: bool, text: str, end: int) -> bool:
    """Whether `value`, written after a name of class `cls`, is a credential."""
    if cls == "secret" and len(value) >= 8:  # "auth": base64 of "user:password" (Docker)
        raw = _b64_text(value)
        if raw is not None and b":" in raw:
            user, _, secret = raw.decode("ascii").partition(":")
            if secret and _USERNAME.fullmatch(user) and not _is_allowed(secret):
                return True
    if cls == "secret" and ":" in value and not _is_path(value):  # "credentials: bob:hunter2!"
        user, _, password = value.partition(":")
        if _USERNAME.fullmatch(user) and _looks_like_password(password):
            return not _is_allowed(value)
    shortest = {"key": 16, "password": 4}.get(cls, 8 if mode == "assign" or quoted else 16)
    if len(value) < shortest or _is_allowed(value):
        return False
    if not quoted and (_CODE.search(value) or value.lower() in CODE_VARS):
        return False  # an expression or a variable: `key = derive(key)`, `password = auth`
    if mode == "assign" and not quoted and text[end : end + 3].lstrip(" \t")[:1] in ("|", ")"):
        return False  # a type in a signature: `key: Ed25519PrivateKey | None`
    if cls == "key":  # a bare "key": hex needs the length of a real key, not a key id
        return _looks_random(value, 16) and not (_HEX.fullmatch(value) and len(value) < 32)
    if cls == "secret":
        if mode == "assign" or quoted:
            return _looks_secretish(value) and not (not quoted and _CODE.search(value))
        return _looks_random(value, 16)
    # a password
    if quoted:  # a few words need a digit or symbol: "a secret" is a phrase, not a password
        if " " in value and not _looks_like_password(value.replace(" ", "")):
            return False
        return _password_literal(value)
    if mode != "assign":
        return _looks_like_password(value)
    if not _password_literal(value) or (_WORDY.fullmatch(value) and not value.islower()):
        return False  # a type or constant: `password: SecretStr`, `password=DEFAULT_PW`
    if re.fullmatch(r"[a-z_][a-z0-9_]*_[a-z0-9_]*|[A-Z_][A-Z0-9_]*_[A-Z0-9_]*", value):
        return False  # a variable or constant: `password = db_password`
    if value.isalpha() and value.islower():  # a bare word: only at the end of a line
        rest = text[end : end + 40].lstrip(" \t")
        return not rest or rest[0] in "\r\n,;#}"
    return True


def _kind(cls: str, mode: str, ident: str) -> str:
    low = ident.lower()
    if cls != "password" and "aws" in low and "secret" in low:
        return "aws-secret-access-key"
    if cls == "password":
        return "password-assignment" if mode == "assign" else "password-in-prose"
    return "secret-assignment" if mode == "assign" else "high-entropy-secret"


def _named_values(text: str, lower: str) -> Iterator[_Hit]:
    rank = _STRUCT_RANK + 10
    seen: set[int] = set()
    for stem in STEMS:
        i = lower.find(stem)
        while i != -1:
            a, b = _ident_bounds(text, i, i + len(stem))
            i = lower.find(stem, max(b, i + 1))
            if a in seen or a >= b:
                continue
            seen.add(a)
            if a > 0 and text[a - 1] in "{%":  # a reference: ${TOKEN}, %PASSWORD%
                continue
            if b < len(text) and text[b] not in _AFTER_NAME:  # "token.", "keys)": no value
                continue
            ident = text[a:b]
            if _name_class(ident, "") is None:  # a word before can only narrow the class
                continue
            found = _value_after(text, b)
            if found is None:
                continue
            mode, start, end, quoted = found
            value = text[start:end]
            if value.endswith(("...", "…")):
                continue  # elided on purpose: "sk-abc...", "eyJhbGci..."
            if not quoted:
                value = value.rstrip(_TRAILING) if mode != "assign" else value.rstrip(".,:)]}")
                end = start + len(value)
                if mode != "assign" and (len(value) < 6 or (value.isalpha() and len(value) < 16)):
                    continue  # prose goes on: "token budget", "password policy"
            if ident.lower() == "pass" and (
                text[b] not in ":=" if mode == "assign" else quoted or not _DIGIT.search(value)
            ):
                continue  # "pass `notebook`", "pass :meth:`x`": the verb, not a password
            cls = _name_class(ident, _word_before(text, a) if ident.isalpha() else "")
            if cls is not None and _judge(cls, mode, value, quoted, text, end):
                yield _Hit(_kind(cls, mode, ident), start, end, rank)


# --- the API ------------------------------------------------------------------------------


def _merge(hits: list[_Hit]) -> list[Finding]:
    """One finding per cluster of overlapping hits: their union, named by the best rank."""
    findings: list[Finding] = []
    hits.sort(key=lambda h: (h.start, -h.end))
    cluster: list[_Hit] = []
    cluster_end = -1
    for hit in [*hits, None]:
        if hit is not None and hit.start < cluster_end:
            cluster.append(hit)
            cluster_end = max(cluster_end, hit.end)
            continue
        if cluster:
            best = min(cluster, key=lambda h: h.rank)
            findings.append(Finding(best.kind, cluster[0].start, cluster_end))
        if hit is not None:
            cluster, cluster_end = [hit], hit.end
    return findings


# Glued parts make words that were never written, so there only a secret known by its own
# shape counts (a vendor token, a key, a JWT), not one known by the name written before it.
_NAMED_KINDS = frozenset(
    {
        "password-in-prose",
        "password-assignment",
        "cli-password",
        "secret-assignment",
        "high-entropy-secret",
    }
)
# A line break between two characters of a key: a terminal, a mail client or an editor that
# wraps at a fixed width cuts a long key anywhere (blanks a terminal pads the line with go too);
# word processors and chat clients break lines with a vertical tab or a line separator.
_BREAK = re.compile("[\n\r\v\f\u2028\u2029]")
_RUN_BEFORE_BREAK = re.compile(r"([A-Za-z0-9_\-+/=.]{0,16})[ \t]*\r?\Z")
_RUN_AFTER_BREAK = re.compile(r"[A-Za-z0-9_\-+/]{0,16}")


def _wraps(text: str) -> list[tuple[int, int]]:
    """The spans of the line breaks (with blanks before them) inside a run of key characters.

    The run, both sides together, must be as long as the shortest key (16): words that end
    and begin two lines of prose are not read again.
    """
    spans = []
    for m in _BREAK.finditer(text):
        if m[0] == "\r" and text[m.end() : m.end() + 1] == "\n":
            continue  # CRLF: the LF that follows is the break
        head = _RUN_BEFORE_BREAK.search(text, max(0, m.start() - 40), m.start())
        before = len(head[1]) if head else 0
        after = _RUN_AFTER_BREAK.match(text, m.end())
        if head and before and after and after.end() > m.end() and before + len(after[0]) >= 16:
            spans.append((head.end(1), m.end()))
    return spans


def _find(text: str) -> list[Finding]:
    if len(text) < 8:
        return []
    plain = _hits(text)
    # A key found whole on its line is not read again as running on into the next line.
    cut = [h for h in _unwrapped_hits(text) if not any(p.start <= h.start < p.end for p in plain)]
    return _merge(plain + cut)


def _unwrapped_hits(text: str) -> list[_Hit]:
    """Secrets known by their shape that a line break cuts, read with the breaks left out.

    Only a secret that crosses a break counts (the rest is the plain reading's), and only one
    known by its shape: joined lines make words nobody wrote, like glued parts.
    """
    breaks = _wraps(text)
    if not breaks:
        return []
    pieces: list[str] = []
    origin: list[int] = []
    joints: list[int] = []
    pos = 0
    for start, end in [*breaks, (len(text), len(text))]:
        pieces.append(text[pos:start])
        origin.extend(range(pos, start))
        joints.append(len(origin))
        pos = end
    return [
        _Hit(hit.kind, origin[hit.start], origin[hit.end - 1] + 1, hit.rank)
        for hit in _hits("".join(pieces), named=False)
        if hit.kind not in _NAMED_KINDS and any(hit.start < j < hit.end for j in joints)
    ]


def _hits(text: str, *, named: bool = True) -> list[_Hit]:
    """Every hit in `text`; without `named`, only secrets known by their shape."""
    lower = text.lower()
    if len(lower) != len(text):  # a few characters lowercase to two: keep offsets aligned
        lower = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    hits = list(_private_keys(text))
    vendor = list(_vendor_tokens(text))
    hits += vendor
    hits += _aws_secret_near_key_id(text, vendor)
    hits += _structures(text, lower)
    if named:
        hits += _named_values(text, lower)
    return hits


def find_secrets(text: str) -> list[Finding]:
    """Every credential in `text`, in order, each span covering the whole secret value.

    The text is read as its screening copy (markers out, NFKC, no invisible characters);
    each span is given in `text` itself, covering whatever the copy left out inside it.
    """
    copy, origin = screening_copy(text)
    findings = _find(copy)
    if origin is None or not findings:
        return findings
    spans = [(origin[f.start], origin[f.end - 1] + 1, f.kind) for f in findings]
    merged: list[Finding] = []
    for start, end, kind in spans:  # one original character may give two copy characters
        if merged and start < merged[-1].end:
            merged[-1] = Finding(merged[-1].kind, merged[-1].start, max(end, merged[-1].end))
        else:
            merged.append(Finding(kind, start, end))
    return merged


def find_in_parts(parts: Sequence[str]) -> list[tuple[str, tuple[int, ...]]]:
    """Secrets in a record made of `parts` (its fields, or a text and what is appended).

    Read two ways: joined by newlines (a title that names a credential, its value alone in
    the text), and glued where the parts meet (half a key in each): of the glued reading
    only secrets known by their shape that cross a meeting point count. Each answer is
    (kind, indexes of the parts it touches).
    """
    found: list[tuple[str, tuple[int, ...]]] = []
    for glued in (False, True):
        pieces = [p.strip() if glued else p for p in parts]
        starts, pos = [], 0
        for piece in pieces:
            starts.append(pos)
            pos += len(piece) + (0 if glued else 1)
        text = ("" if glued else "\n").join(pieces)
        for f in find_secrets(text):
            touched = tuple(
                i for i, (a, p) in enumerate(zip(starts, pieces, strict=True))
                if f.start < a + len(p) and a < f.end
            )  # fmt: skip
            if (f.kind, touched) in found:
                continue  # a key cut at a line break: both readings find it
            if not glued or (len(touched) > 1 and f.kind not in _NAMED_KINDS):
                found.append((f.kind, touched))
    return found


def redact(text: str) -> tuple[str, list[str]]:
    """`text` with each credential replaced by ``[REDACTED:kind]``, and the kinds replaced.

    The kinds are listed once per redaction, in text order. Redacting twice changes nothing:
    a marker excuses only itself, so what meets across a redaction is read again.
    """
    kinds: list[str] = []
    for _ in range(4):
        findings = find_secrets(text)
        if not findings:
            break
        parts: list[str] = []
        last = 0
        for finding in findings:
            parts.append(text[last : finding.start])
            parts.append(f"[REDACTED:{finding.kind}]")
            last = finding.end
        parts.append(text[last:])
        text = "".join(parts)
        kinds += [f.kind for f in findings]
    return text, kinds
