"""Every member of every protocol of the store's seam is exercised by a contract test, and
the seam is the sum of its concepts: a method added to a protocol without a test, or to
`StoreReader`/`StoreWriter` outside any concept, fails here."""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Protocol

import pytest

from palimpsest.store import StoreReader, StoreWriter, protocols

HERE = Path(__file__).parent
CONCEPTS = [
    cls for _, cls in inspect.getmembers(protocols, inspect.isclass)
    if cls.__module__ == protocols.__name__ and Protocol in cls.__mro__
]  # fmt: skip


def own_members(cls: type) -> set[str]:
    """What the protocol itself declares: its methods and attributes, not its bases'."""
    declared = {name for name, value in vars(cls).items() if inspect.isfunction(value)}
    return {name for name in declared | set(vars(cls).get("__annotations__", {}))
            if not name.startswith("_")}  # fmt: skip


def used(protocol: type, name: str) -> str:
    """How a use of the member reads: `.name(` for a method, `.name` for an attribute."""
    return rf"\.{name}\b" + (r"\(" if callable(getattr(protocol, name, None)) else "")


def contract_source() -> str:
    """The suites and the records they write through (this file aside: it names them all)."""
    return "\n".join(p.read_text() for p in HERE.glob("*.py") if p.name != Path(__file__).name)


@pytest.mark.parametrize("protocol", CONCEPTS, ids=lambda cls: cls.__name__)
def test_every_member_of_the_protocol_is_used_by_a_contract_test(protocol: type) -> None:
    source = contract_source()
    untested = {
        name for name in own_members(protocol) if not re.search(used(protocol, name), source)
    }
    assert not untested, f"{protocol.__name__}: no contract test uses {sorted(untested)}"


def test_the_sessions_are_the_sum_of_the_concepts_each_method_declared_once() -> None:
    concepts = [cls for cls in CONCEPTS if cls not in (StoreReader, StoreWriter, protocols.Store)]
    declared: dict[str, str] = {}
    for cls in concepts:
        for name in own_members(cls):
            assert name not in declared, f"{name} is declared by {declared[name]} and {cls}"
            declared[name] = cls.__name__
    summed = own_members(StoreReader) | own_members(StoreWriter)
    assert summed == {"workspace", "discard"}  # the session's own: its workspace, a dry run
    assert {c for c in concepts if c.__name__.endswith("Reader")} <= set(StoreReader.__mro__)
    assert set(concepts) <= set(StoreWriter.__mro__)
