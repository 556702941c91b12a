"""Version 2 session files (hex blocks) and the piecewise writer of both versions.

Random sessions round-trip bit-exactly in both versions (version 2 forced on small
layers by `pack_above=0`); the writer's text is exactly json.dumps of session_to_dict;
every damaged block is refused with one message naming the key; the loader's shortcut
past long hex strings reads any valid JSON spelling of a file the same way.
"""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mha_gui.engine import Session, ViewState, load_session, random_parameters, save_session
from mha_gui.engine.layer import session_codec as codec
from mha_gui.engine.layer.config import Config
from mha_gui.engine.layer.presets import load_preset, random_session
from mha_gui.engine.layer.session import (
    PACK_ABOVE_NUMBERS,
    number_count,
    session_to_dict,
    write_session_gently,
)

TOKEN_TEXT = st.text(
    st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=6
).filter(str.strip)


@st.composite
def sessions(draw):
    """Small random sessions: any heads/groups, biases, a mask, odd tokens, odd floats."""
    h_kv = draw(st.integers(1, 3))
    h = h_kv * draw(st.integers(1, 2))
    n = draw(st.integers(1, 5))
    config = Config(
        n=n,
        d_model=draw(st.integers(1, 5)),
        h=h,
        h_kv=h_kv,
        d_k=draw(st.integers(1, 3)),
        d_v=draw(st.integers(1, 3)),
        causal=draw(st.booleans()),
        bias=draw(st.booleans()),
    )
    params = random_parameters(config, seed=draw(st.integers(0, 99)))
    floats = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
    for array in params.as_dict().values():  # a few values with no short decimal form
        flat = array.reshape(-1)
        for i in draw(st.lists(st.integers(0, flat.size - 1), max_size=3)):
            flat[i] = draw(floats)
    mask = None
    if draw(st.booleans()):
        mask = np.array(draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))).reshape(n, n)
    tokens = draw(st.lists(TOKEN_TEXT, min_size=n, max_size=n))
    view = ViewState(
        draw(st.integers(0, 6)), draw(st.integers(0, h - 1)), draw(st.integers(0, n - 1))
    )
    source = draw(st.sampled_from(["", 'a "quoted" \\ source', "gpt2 · layer 5"]))
    return Session(config, tokens, params, view, mask, source)


def _same(a: Session, b: Session) -> None:
    assert a.same_contents(b) and a.view == b.view
    for name, value in a.params.as_dict().items():
        assert getattr(b.params, name).tobytes() == value.tobytes()  # bit-exact, -0.0 too
        assert getattr(b.params, name).flags.writeable
    assert (a.mask is None) == (b.mask is None)


@settings(max_examples=60, deadline=None)
@given(sessions(), st.booleans())
def test_random_sessions_round_trip_bit_exactly_in_both_versions(tmp_path_factory, s, packed):
    path = tmp_path_factory.mktemp("s") / "s.json"
    save_session(s, path, pack_above=0 if packed else 10**9)
    data = json.loads(path.read_text())
    assert data["version"] == (2 if packed else 1)
    assert isinstance(data["matrices"]["X"], dict) == packed
    _same(s, load_session(path))


@settings(max_examples=60, deadline=None)
@given(sessions(), st.booleans())
def test_the_writer_writes_exactly_what_json_dumps_would(tmp_path_factory, s, packed):
    path = tmp_path_factory.mktemp("s") / "s.json"
    write_session_gently(s, path, pack_above=0 if packed else 10**9)
    expected = json.dumps(session_to_dict(s, packed=packed), indent=1, allow_nan=False) + "\n"
    assert path.read_text() == expected


def test_a_large_session_is_written_as_version_2_and_a_small_one_as_version_1(tmp_path):
    small = save_session(load_preset("toy"), tmp_path / "small.json")
    assert json.loads(small.read_text())["version"] == 1
    large = random_session(seed=1, tokens=40, d_model=32, heads=4)  # 40·32 + 4·32·32 numbers
    path = save_session(large, tmp_path / "large.json", pack_above=5000)
    assert json.loads(path.read_text())["version"] == 2
    _same(large, load_session(path))


def _packed(**change):
    s = random_session(seed=2, tokens=3, d_model=4, heads=2)
    s.mask = np.eye(3, dtype=bool)
    d = session_to_dict(s, packed=True)
    for key, value in change.items():
        target, field = key.split("__")
        block = d["mask"] if target == "mask" else d["matrices"][target]
        if value is None:
            block.pop(field)
        else:
            block[field] = value(block[field]) if callable(value) else value
    return d


NAN = np.array([np.nan]).tobytes().hex()
CORRUPT = {
    "bad hex digit": (_packed(X__hex=lambda h: "zz" + h[2:]), "matrices.X.hex must hold hex"),
    "non-ASCII digit": (_packed(X__hex=lambda h: "é" + h[1:]), "matrices.X.hex must hold hex"),
    "too few digits": (
        _packed(W_K__hex=lambda h: h[:-2]),
        "matrices.W_K.hex has 254 digits but shape (2, 4, 2) of float64 needs 256",
    ),
    "odd digit count": (_packed(W_K__hex=lambda h: h + "0"), "matrices.W_K.hex has 257 digits"),
    "wrong dtype": (_packed(W_Q__dtype="float32"), 'matrices.W_Q.dtype must be "float64"'),
    "NaN bytes": (_packed(X__hex=lambda h: NAN + h[16:]), "matrices.X[0, 0] is nan"),
    "beyond the limit": (
        _packed(X__hex=lambda h: np.array([1e300]).tobytes().hex() + h[16:]),
        "matrices.X[0, 0] is 1e+300: values must be within ±1e+06",
    ),
    "shape mismatch": (_packed(W_O__shape=[2, 8]), "matrices.W_O has shape (2, 8) but"),
    "shape not a list": (_packed(W_O__shape="4x4"), "matrices.W_O.shape must be a list"),
    "shape of bools": (_packed(W_O__shape=[True, 4]), "matrices.W_O.shape must be a list"),
    "missing hex": (_packed(X__hex=None), 'matrices.X is missing "hex"'),
    "unknown block key": (
        _packed(X__order="C"),
        "matrices.X has unknown key(s): order",
    ),
    "hex not a string": (_packed(X__hex=12), "matrices.X.hex must be a string"),
    "mask byte 02": (_packed(mask__hex=lambda h: "02" + h[2:]), "mask[0, 0] is byte 2"),
    "mask dtype": (_packed(mask__dtype="float64"), 'mask.dtype must be "bool"'),
    "mask shape": (_packed(mask__shape=[3, 2]), "mask has shape (3, 2) but n=3 needs (3, 3)"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
@pytest.mark.parametrize("long", [False, True], ids=["short", "long"])
def test_damaged_blocks_are_refused_with_one_clear_message(tmp_path, monkeypatch, case, long):
    """Short hex strings reach the JSON parser, long ones the shortcut: same verdict."""
    monkeypatch.setattr(codec, "LONG_HEX", 0 if long else 10**9)
    data, words = CORRUPT[case]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_session(path)
    message = str(err.value)
    assert message.startswith("bad.json: ") and words in message, message
    assert "\n" not in message


def test_a_block_in_a_version_1_file_and_an_unknown_version_are_refused(tmp_path):
    data = _packed()
    data["version"] = 1
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="matrices.X must be nested lists of numbers$"):
        load_session(path)
    data["version"] = 3
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match='"version" 3 is not supported .*versions 1 and 2'):
        load_session(path)


def test_version_2_may_mix_blocks_and_nested_lists(tmp_path):
    s = random_session(seed=4, tokens=3, d_model=4, heads=2)
    data = session_to_dict(s, packed=True)
    data["matrices"]["W_O"] = s.params.W_O.tolist()
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(data))
    _same(s, load_session(path))


@pytest.mark.parametrize(
    "spelling",
    [
        lambda d: json.dumps(d),  # no indentation at all
        lambda d: json.dumps(d, indent="\t", separators=(" ,", " :  ")),  # odd whitespace
        lambda d: "\ufeff" + json.dumps(d, indent=2),  # a byte order mark
    ],
    ids=["compact", "odd whitespace", "bom"],
)
def test_any_json_spelling_of_a_version_2_file_reads_the_same(tmp_path, monkeypatch, spelling):
    monkeypatch.setattr(codec, "LONG_HEX", 8)  # every block takes the shortcut
    s = random_session(seed=5, tokens=3, d_model=4, heads=2)
    s.tokens = ['say "hi"', "back\\slash\\", '\\"']  # quotes and backslashes before quotes
    s.source = 'the "hex": "00" trap'
    path = tmp_path / "s.json"
    path.write_text(spelling(session_to_dict(s, packed=True)), encoding="utf-8")
    _same(s, load_session(path))


def test_the_shortcut_leaves_other_long_strings_to_the_checks(tmp_path, monkeypatch):
    """A long token is still a long token, not a placeholder; a NUL placeholder spelt in
    the file is just a bad hex string."""
    monkeypatch.setattr(codec, "LONG_HEX", 8)
    data = _packed()
    data["tokens"][0] = "t" * 50
    path = tmp_path / "long.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"tokens\[0\] is longer than 40"):
        load_session(path)
    data = _packed(X__hex="\x00" + "0" * 8)
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="matrices.X.hex must hold hex digits only"):
        load_session(path)


def test_split_hex_blocks_takes_out_only_long_hex_values(monkeypatch):
    text = b'{"a": "x\\"yz", "hex": "0123456789", "b": {"hex" :\n "ab"}, "c": "0123456789"}'
    assert codec.split_hex_blocks(text) == (text, {})  # nothing as long as LONG_HEX
    monkeypatch.setattr(codec, "LONG_HEX", 4)
    skeleton, blobs = codec.split_hex_blocks(text)
    parsed = json.loads(skeleton)
    assert [bytes(v) for v in blobs.values()] == [b"0123456789"]
    assert blobs[parsed["hex"]] and parsed["a"] == 'x"yz' and parsed["c"] == "0123456789"
    assert parsed["b"] == {"hex": "ab"}  # short: left to the parser


def test_a_large_layer_writes_as_hex_and_reads_back(tmp_path):
    """Just over the default threshold: version 2, one file, still JSON; just under it
    (the largest session a person might read), version 1."""
    s = random_session(seed=6, tokens=300, d_model=256, heads=4)
    assert number_count(s) > PACK_ABOVE_NUMBERS  # 338 944
    s.params.X[0, 0] = 0.1 + 0.2
    path = save_session(s, tmp_path / "big.json")
    assert json.loads(path.read_text())["version"] == 2
    _same(s, load_session(path))
    s = random_session(seed=6, tokens=100, d_model=230, heads=5)
    assert number_count(s) <= PACK_ABOVE_NUMBERS  # 234 600
    assert json.loads(save_session(s, tmp_path / "under.json").read_text())["version"] == 1
