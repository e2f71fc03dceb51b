"""SettingReader / SettingWriter (store/protocols.py): the settings a person chose, per
workspace; the others keep their defaults."""

from __future__ import annotations

from palimpsest.store import Store


def test_a_setting_is_replaced_by_the_next_value_and_dropped_to_its_default(
    store: Store, workspace: str
) -> None:
    with store.write(workspace) as tx:
        tx.put_setting("freshness_days.fact", 30)
        tx.put_setting("freshness_days.fact", 45)
        tx.put_setting("recall.floor", {"words": 0.2, "on": True})
        tx.put_setting("gone", "soon")
        tx.drop_setting("gone")
    with store.read(workspace) as tx:
        assert tx.settings() == {"freshness_days.fact": 45,
                                 "recall.floor": {"words": 0.2, "on": True}}  # fmt: skip
    with store.read(f"{workspace}-other") as tx:
        assert tx.settings() == {}
