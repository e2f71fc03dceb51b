"""Workspace settings: a few known keys with defaults, each change an event with its reason.

A setting is a line in `SETTINGS`: its name, its default, how a value given as text (the
CLI) or as JSON (the API) is read, and one line for the reader. The store keeps only the
values a person chose (a store written before settings existed has none: every default
applies); the `settings.change` events written with them are their history.

No MCP tool reaches these: they are a person's decisions about the workspace, made from the
CLI, and the tool list an agent reads has no room to spare.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..domain.errors import ValidationError
from ..domain.model import FRESHNESS_DAYS, KINDS, Event
from ..screening import gate
from ..store import EventFilter, StoreReader, StoreWriter
from .admin_answers import SettingChange, SettingsAnswer, SettingsHistory, SettingShown
from .base import ServiceBase
from .served_record import KEEP_DAYS, KEEP_SETTING
from .shown import event_view

OP = "settings.change"
DEFAULT = "default"  # as a value: go back to the default (and follow it if it changes)
NEVER = "never"
MAX_DAYS = 36_500  # a hundred years; longer is `never`


def days_or_never(value: Any) -> int | None:
    """A freshness window: whole days, or `never` (null) for a kind that does not go stale."""
    if isinstance(value, str):
        value = value.strip().lower()  # `Never` is `never`
    if value is None or value == NEVER:
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit():  # not `²` or `١`
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_DAYS:
        return value
    raise ValueError(f"a whole number of days from 1 to {MAX_DAYS}, or `{NEVER}`")


def whole_days(value: Any) -> int:
    """A number of days, 0 to MAX_DAYS, given as a number or as text."""
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_DAYS:
        return value
    raise ValueError(f"a whole number of days from 0 to {MAX_DAYS}")


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    read: Callable[[Any], Any]  # a given value -> the stored one; ValueError says what is allowed
    about: str


def _freshness(kind: str) -> Setting:
    return Setting(
        f"freshness_days.{kind}",
        FRESHNESS_DAYS.get(kind),
        days_or_never,
        f"days until an unverified {kind} is flagged possibly stale",
    )


def share(value: Any) -> float:
    """A number from 0 to 1 (a weight, a similarity), given as a number or as text."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ValueError("a number from 0 to 1") from None
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    raise ValueError("a number from 0 to 1")


# Every workspace setting. Adding one is a line here, and the code that reads it.
SETTINGS: Mapping[str, Setting] = {
    s.name: s
    for s in [
        *(_freshness(kind) for kind in KINDS),
        # Hybrid recall (service/fusion.py); defaults measured on LoCoMo (docs/recall.md).
        Setting("recall.weight.words", 0.4, share, "weight of full-text matches in recall"),
        Setting("recall.weight.meaning", 0.7, share, "weight of matches by meaning in recall"),
        Setting("recall.min_similarity", 0.25, share, "least similarity a match by meaning needs"),
        Setting(
            "recall.weight.context",
            0.3,
            share,
            "share of a hit's score lent to memories filed beside it in its episode",
        ),
        Setting(
            "recall.weight.episode",
            0.7,
            share,
            "share of the best match of its episode (a notebook, an occurred_at day) each "
            "match gains",
        ),
        Setting(
            "recall.weight.author",
            0.15,
            share,
            "share of the best score a match gains when the query names its author",
        ),
        # The relevance floor (service/floor.py).
        Setting(
            "recall.floor.similarity",
            0.3,
            share,
            "similarity some match needs for a query to be answered at all (or the words below)",
        ),
        Setting(
            "recall.floor.words",
            0.3,
            share,
            "share of a query's words some match needs for it to be answered (or the similarity)",
        ),
        Setting(
            "recall.floor.share",
            0.5,
            share,
            "share of the best hit's score a hit needs to be listed",
        ),
        # What each session was shown (service/served.py).
        Setting(
            KEEP_SETTING,
            KEEP_DAYS,
            whole_days,
            "days the record of what each session was shown is kept (0: none is kept)",
        ),
    ]
}
# More changes than any workspace makes to its settings: their history is read whole.
MAX_CHANGES = 100_000


def current_settings(tx: StoreReader, at_seq: int | None = None) -> dict[str, Any]:
    """Every setting's value in this workspace: the chosen one, else the default.

    At a past event `at_seq`, the value then: the old value of the first change after it,
    else today's (the events keep both sides of every change).
    """
    chosen = tx.settings()
    values = {name: chosen.get(name, s.default) for name, s in SETTINGS.items()}
    if at_seq is not None:
        later = tx.events(EventFilter(target_id=tx.workspace, limit=MAX_CHANGES))
        for event in reversed([e for e in later if e.op == OP and e.seq > at_seq]):
            for name, (old, _new) in event.data.items():
                if name in values:
                    values[name] = old
    return values


def freshness_days(tx: StoreReader, at_seq: int | None = None) -> dict[str, int | None]:
    """Each kind's freshness window (None: it does not go stale by age), now or at `at_seq`."""
    values = current_settings(tx, at_seq)
    return {kind: values[f"freshness_days.{kind}"] for kind in KINDS}


class SettingsOps(ServiceBase):
    def settings(self) -> SettingsAnswer:
        """Every workspace setting with its value, its default and what it does."""
        with self.store.read(self.workspace) as tx:
            return {"settings": _listed(tx.settings())}

    def change_settings(
        self,
        *,
        changes: dict[str, Any],
        because: str | None = None,  # required, but checked here so that omitting it is refused
        dry_run: bool = False,
        idempotency_key: str | None = None,
    ) -> SettingsAnswer:
        """Set settings (a value, or `default` to go back to it), as one event with `because`."""
        wanted = _read_changes(changes)
        if not isinstance(because, str) or not because.strip():
            raise ValidationError("`because` is required to change a setting.", field="because")
        gate.screen("because", because)

        def body(tx: StoreWriter, now: str, op_id: str) -> SettingsAnswer:
            chosen = tx.settings()
            data: dict[str, list[Any]] = {}
            for name, value in wanted.items():
                old = chosen.get(name, SETTINGS[name].default)
                new = SETTINGS[name].default if value is _RESET else value
                if (old, name in chosen) == (new, value is not _RESET):
                    continue  # already so, and chosen (or defaulted) as asked
                if value is _RESET:
                    tx.drop_setting(name)
                else:
                    tx.put_setting(name, value)
                data[name] = [old, new]
            changes: dict[str, SettingChange] = {
                k: {"old": o, "new": n} for k, (o, n) in data.items()
            }
            if not data:
                return {"changes": changes, "settings": _listed(chosen), "unchanged": True}
            event = Event(0, op_id, now, self.actor, OP, "workspace", self.workspace,
                          fields=tuple(data), note=because.strip(), data=data)  # fmt: skip
            tx.append_event(event)
            return {"changes": changes, "settings": _listed(tx.settings())}

        request = {"changes": {k: DEFAULT if v is _RESET else v for k, v in wanted.items()},
                   "because": because}  # fmt: skip
        return self._write(OP, request, idempotency_key, dry_run, body)

    def settings_history(self, *, limit: int = 100) -> SettingsHistory:
        """The changes of this workspace's settings, oldest first: who, when, why, old -> new."""
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 1000:
            raise ValidationError("`limit` must be from 1 to 1000.", field="limit")
        with self.store.read(self.workspace) as tx:
            events = tx.events(EventFilter(target_id=self.workspace, limit=limit))
        return {"events": [event_view(e) for e in events if e.op == OP]}


_RESET = object()  # a change asking for the default


def _read_changes(changes: Any) -> dict[str, Any]:
    """The changes asked for, each value read by its setting (or `_RESET`)."""
    if not isinstance(changes, dict) or not changes:
        raise ValidationError(
            "Give at least one setting and its value; `palimpsest settings` lists them.",
            field="changes",
        )
    wanted: dict[str, Any] = {}
    for given, value in changes.items():
        name = given.strip().lower() if isinstance(given, str) else given  # case forgiven
        setting = SETTINGS.get(name) if isinstance(name, str) else None
        if setting is None:
            raise ValidationError(
                f"`{gate.shown_name(given)}` is not a workspace setting; `palimpsest settings` "
                "lists them.",
                field="changes",
            )
        if isinstance(value, str) and value.strip().lower() == DEFAULT:
            wanted[name] = _RESET
            continue
        try:
            wanted[name] = setting.read(value)
        except ValueError as exc:  # the value is not repeated: say what is allowed
            raise ValidationError(f"`{name}` takes {exc}.", field=name) from None
        if isinstance(wanted[name], str):
            gate.screen(name, wanted[name])
    return wanted


def _listed(chosen: Mapping[str, Any]) -> dict[str, SettingShown]:
    return {
        name: {
            "value": chosen.get(name, s.default),
            "default": s.default,
            "chosen": name in chosen,
            "about": s.about,
        }
        for name, s in SETTINGS.items()
    }
