"""SettingReader / SettingWriter and AnswerReader / AnswerWriter (store/protocols.py):
chosen settings per workspace, and stored answers that go with what they name."""

from __future__ import annotations

import json

from palimpsest.model import Tombstone
from palimpsest.store import Store, StoredResponse

from .records import at, event, filed, memory


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


def test_a_stored_answer_is_read_by_actor_op_and_key(store: Store, workspace: str) -> None:
    answer = StoredResponse("h" * 64, json.dumps({"id": "m_x", "version": 1}))
    with store.write(workspace) as tx:
        tx.store_response("user:ann", "remember", "k1", answer)
    with store.read(workspace) as tx:
        assert tx.stored_response("user:ann", "remember", "k1") == answer
        assert tx.stored_response("user:bob", "remember", "k1") is None
        assert tx.stored_response("user:ann", "revise", "k1") is None
    with store.read(f"{workspace}-other") as tx:
        assert tx.stored_response("user:ann", "remember", "k1") is None


def test_an_answer_naming_a_forgotten_memory_goes_with_it(store: Store, workspace: str) -> None:
    with store.write(workspace) as tx:
        m = memory(workspace, "nb_a", "The code is 9911")
        filed(tx, m)
        naming = StoredResponse("h" * 64, json.dumps({"hits": [{"id": m.id}]}))
        other = StoredResponse("i" * 64, json.dumps({"id": "m_other", "text": m.id}))
        tx.store_response("user:ann", "remember", "k-naming", naming)
        tx.store_response("user:ann", "remember", "k-other", other)
        seq = tx.append_event(event("forget", m.id))
        tx.forget_memory(Tombstone(m.id, at(9), "user:ann", "a secret"), seq)
    with store.read(workspace) as tx:
        assert tx.stored_response("user:ann", "remember", "k-naming") is None
        assert tx.stored_response("user:ann", "remember", "k-other") == other  # text, not an id
