"""Which secret detector this is: a digest of its code and rules, so that a version found
clean by one detector is read again by the next (doctor's marks, store/review_rows.py)."""

from __future__ import annotations

import functools
import hashlib
from importlib import resources


@functools.cache
def detector_id() -> str:
    """`d1:` and 16 hex digits of the SHA-256 of the detector's modules and its rules."""
    screening = resources.files(__package__)
    digest = hashlib.sha256()
    sources = [screening / "secret_rules.py"]
    sources += sorted((p for p in (screening / "secrets").iterdir() if p.name.endswith(".py")),
                      key=lambda p: p.name)  # fmt: skip
    for source in sources:
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return "d1:" + digest.hexdigest()[:16]
