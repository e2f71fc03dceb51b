"""The NAME rule of `palimpsest secret` against the gate: a name `secret set` accepts is one
every memory can hold as `secret:NAME`, wherever a credential's value would stand."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from palimpsest import keychain
from palimpsest.domain.errors import ValidationError
from palimpsest.screening.secrets import find_secrets

PLACES = keychain.VALUE_PLACES
NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-"


# Names as people write them (words and numbers between separators), and any string at all.
WORDY_NAMES = st.builds(
    lambda words, seps: "".join(w + s for w, s in zip(words[:-1], seps, strict=False)) + words[-1],
    st.lists(st.from_regex(r"[A-Za-z]{1,9}[0-9]{0,4}", fullmatch=True), min_size=1, max_size=4),
    st.lists(st.sampled_from("._/-"), min_size=3, max_size=3),
)


@settings(max_examples=500, deadline=None)
@given(st.one_of(WORDY_NAMES, st.text(NAME_CHARS, min_size=1, max_size=40)))
@example("AAaAaAaAaAaAaAaAa")  # read as a client secret's value, not as a password's
def test_a_name_set_accepts_passes_the_gate_wherever_it_stands(name: str) -> None:
    try:
        keychain.check_name(name)
    except ValidationError:
        return
    for place in PLACES:
        text = place.format(ref=keychain.reference(name))
        assert find_secrets(text) == [], text


@pytest.mark.parametrize("name", ["hunter22", "token2", "a\x00b", "a" * 101, "a b", "/a"])
def test_a_name_the_gate_would_read_as_a_credential_or_malformed_is_refused(name: str) -> None:
    with pytest.raises(ValidationError) as caught:
        keychain.check_name(name)
    assert caught.value.field == "name"
    assert name not in caught.value.message
