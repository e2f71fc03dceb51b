"""The service is one class made of operations grouped by concept (service/__init__.py).
Its parts may call each other's operations, but none may replace another's: a method
defined in two parts would make which one runs depend on the order of the bases, a rule
nobody reads where it is written. A hook one part needs in another's work is an explicit
call (as `_write_step` calls the withdrawals of a dispute)."""

from __future__ import annotations

from collections import defaultdict

from palimpsest.service import Service


def defined_by_each_part(service: type) -> dict[str, list[str]]:
    """Every name defined in the class body of each of the service's parts."""
    owners: defaultdict[str, list[str]] = defaultdict(list)
    for part in service.__mro__:
        if part is object or not part.__module__.startswith("palimpsest."):
            continue
        for name in vars(part):
            if not (name.startswith("__") and name.endswith("__")):
                owners[name].append(f"{part.__module__}.{part.__qualname__}")
    return owners


def test_no_part_of_the_service_replaces_another_s_method() -> None:
    twice = {name: parts for name, parts in defined_by_each_part(Service).items() if len(parts) > 1}
    assert not twice, f"defined in more than one part of Service: {twice}"


def test_the_check_sees_a_part_that_replaces_another_s_method() -> None:
    """Shown able to fail: a part redefining `remember` is caught."""

    class Louder(Service):
        def remember(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
            raise AssertionError("never called")

    Louder.__module__ = "palimpsest.service.louder"
    assert len(defined_by_each_part(Louder)["remember"]) == 2
