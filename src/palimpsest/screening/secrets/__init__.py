"""Secret detection for the write gate: the detector, reading the rules in `secret_rules`.

    find_secrets(text) -> list[Finding]     each Finding(kind, start, end) spans a secret value
    redact(text) -> (text, kinds)           each secret replaced by ``[REDACTED:kind]``
    find_in_parts(parts) -> [(kind, parts)] the secrets of a record read as a whole
    screening_copy(text) -> (copy, origin)  the text as it is read (below)
    prepare()                               compile now what is otherwise compiled on
                                            first use (importing the package stays cheap)

The package, one concept per module (the rules themselves are data in `secret_rules`):
`reading` the screening copy; `values` judging a value; `shapes` private keys and vendor
tokens; `structures` JWTs, URLs, headers, command lines; `names` credential words and the
value next to them; `languages` the same words in other languages; `hits` findings and how
they merge; `detector` the API above.

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
5. The same words in the languages an international team writes in (``mot de passe: X``,
   ``Passwort ist X``, ``パスワードは X``): the table in `secret_rules`, each word found by a
   substring search for a literal it holds, then read with its language's verbs.

Overlapping findings are merged; the span is their union and the kind the most specific.
No pattern nests unbounded quantifiers, so no input makes a regex backtrack badly.
"""

from __future__ import annotations

from .detector import find_in_parts, find_secrets, prepare, redact
from .hits import Finding
from .reading import screening_copy

__all__ = ["Finding", "find_in_parts", "find_secrets", "prepare", "redact", "screening_copy"]
