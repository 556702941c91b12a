"""Sessions round-trip bit-exactly; every malformed file is refused with a clear reason."""

import json

import numpy as np
import pytest

from mha_gui.engine import load_preset, load_session, save_npz, save_session
from mha_gui.engine.layer.session import session_to_dict


@pytest.mark.parametrize("name", ["toy", "causal-6x16", "gqa", "random"])
def test_round_trip_is_bit_exact(tmp_path, name):
    s = load_preset(name)
    s.params.W_Q[0, 0, 0] = 0.1 + 0.2  # a float with no short decimal form
    path = save_session(s, tmp_path / "s.json")
    back = load_session(path)
    assert back.config == s.config and back.tokens == s.tokens
    for key, value in s.params.as_dict().items():
        assert np.array_equal(getattr(back.params, key), value)
        assert getattr(back.params, key).tobytes() == value.tobytes()


def test_round_trip_with_biases_and_view(tmp_path):
    s = load_preset("toy")
    cfg = s.config.with_changes(bias=True)
    from mha_gui.engine import Session, ViewState, random_parameters

    p = random_parameters(cfg, seed=9)
    s2 = Session(cfg, s.tokens, p, ViewState(3, 1, 2))
    back = load_session(save_session(s2, tmp_path / "b.json"))
    assert back.view == ViewState(3, 1, 2)
    assert np.array_equal(back.params.b_O, p.b_O)
    assert json.loads((tmp_path / "b.json").read_text())["view"]["stage"] == "weights"


def _good():
    return session_to_dict(load_preset("toy"))


def _mutate(fn):
    d = _good()
    fn(d)
    return json.dumps(d)


CORPUS = {
    "not json": ("{format: 1", "not valid JSON"),
    "top-level list": ("[1, 2]", "JSON object"),
    "wrong format": (_mutate(lambda d: d.update(format="other")), '"format"'),
    "wrong version": (_mutate(lambda d: d.update(version=99)), '"version" 99'),
    "missing matrices": (_mutate(lambda d: d.pop("matrices")), '"matrices"'),
    "missing W_O": (_mutate(lambda d: d["matrices"].pop("W_O")), "missing W_O"),
    "wrong shape": (
        _mutate(lambda d: d["matrices"].update(W_K=[[[1, 2, 3]] * 4] * 2)),
        "W_K has shape (2, 4, 3)",
    ),
    "NaN": ('{"format": "mha-gui-session", "version": 1, "x": NaN}', "NaN"),
    "string in matrix": (_mutate(lambda d: d["matrices"]["X"][0].__setitem__(0, "1")), "numbers"),
    "bool in matrix": (_mutate(lambda d: d["matrices"]["X"][0].__setitem__(0, True)), "numbers"),
    "huge dims": (_mutate(lambda d: d["config"].update(n=10**9)), "n must be between"),
    "negative dim": (_mutate(lambda d: d["config"].update(d_k=-2)), "d_k must be between"),
    "h_kv not dividing": (_mutate(lambda d: d["config"].update(h_kv=3)), "must divide"),
    "unknown config key": (_mutate(lambda d: d["config"].update(colour=1)), "unknown key"),
    "tokens count": (_mutate(lambda d: d.update(tokens=["a"])), "tokens has 1 entries"),
    "token not string": (_mutate(lambda d: d["tokens"].__setitem__(0, 5)), "tokens[0]"),
    "bias without config": (
        _mutate(lambda d: d["matrices"].update(b_O=[0, 0, 0, 0])),
        "biases are off",
    ),
    "view out of range": (_mutate(lambda d: d["view"].update(head=7)), "view.head"),
    "unknown stage": (_mutate(lambda d: d["view"].update(stage="dance")), "unknown stage"),
    "huge value": (_mutate(lambda d: d["matrices"]["X"][0].__setitem__(0, 1e400)), "Infinity"),
    "deep nesting": ("[" * 100000 + "]" * 100000, "nested too deeply"),
    "empty file": ("", "not valid JSON"),
    "binary": (b"\x80\x81\xff", "cannot read"),
    "integer too big for a float": (
        _mutate(lambda d: d["matrices"]["X"][0].__setitem__(0, 10**400)),
        "matrices.X",
    ),
    "value beyond the editors' limit": (
        _mutate(lambda d: d["matrices"]["X"][0].__setitem__(0, 1e300)),
        "within ±1e+06",
    ),
    "version true": (_mutate(lambda d: d.update(version=True)), '"version" True'),
    "version 1.0": (_mutate(lambda d: d.update(version=1.0)), '"version" 1.0'),
    "duplicate key": (
        json.dumps(_good()).replace('"X":', '"X": [[0]], "X":', 1),
        'duplicate key "X"',
    ),
    "unknown top-level key": (_mutate(lambda d: d.update(colour="red")), "unknown key(s): colour"),
    "token with a newline": (
        _mutate(lambda d: d["tokens"].__setitem__(1, "a\nb")),
        "tokens[1] contains a control character",
    ),
    "mask not boolean": (_mutate(lambda d: d.update(mask=[[0] * 4] * 4)), "mask"),
    "mask wrong shape": (_mutate(lambda d: d.update(mask=[[False] * 3] * 4)), "mask"),
}


@pytest.mark.parametrize("case", sorted(CORPUS))
def test_malformed_sessions_are_refused_clearly(tmp_path, case):
    text, words = CORPUS[case]
    path = tmp_path / "bad.json"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    with pytest.raises(ValueError) as err:
        load_session(path)
    assert words in str(err.value), str(err.value)
    assert "\n" not in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_session(tmp_path / "nope.json")


def test_a_folder_is_not_reported_as_missing(tmp_path):
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        load_session(tmp_path / "dir.json")


def test_nan_message_names_the_file(tmp_path):
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(_good()).replace("1.0", "NaN", 1))
    with pytest.raises(ValueError, match="^nan.json: "):
        load_session(path)


def test_byte_order_mark_is_accepted(tmp_path):
    """Windows Notepad saves UTF-8 with a BOM; the file is still a good session."""
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_good()).encode())
    assert load_session(path).tokens == load_preset("toy").tokens


def test_html_and_unicode_tokens_round_trip(tmp_path):
    s = load_preset("toy")
    s.tokens = ["<s>", "&amp;", "naïve", "猫"]
    back = load_session(save_session(s, tmp_path / "u.json"))
    assert back.tokens == s.tokens


def test_extra_mask_round_trips(tmp_path):
    from mha_gui.engine import Session

    s = load_preset("toy")
    mask = np.zeros((4, 4), bool)
    mask[2, 0] = True
    s = Session(s.config, s.tokens, s.params, s.view, mask)
    back = load_session(save_session(s, tmp_path / "m.json"))
    assert back.mask is not None and np.array_equal(back.mask, mask)
    assert np.array_equal(back.run().weights, s.run().weights)
    assert "mask" not in json.loads(
        save_session(load_preset("toy"), tmp_path / "n.json").read_text()
    )


def test_saving_into_a_folder_path_says_so_and_leaves_nothing(tmp_path):
    (tmp_path / "out.json").mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        save_session(load_preset("toy"), tmp_path / "out.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_npz_has_every_key_and_loads_without_pickle(tmp_path):
    s = load_preset("gqa")
    path = save_npz(s, tmp_path / "a.npz")
    with np.load(path, allow_pickle=False) as d:
        keys = set(d.files)
        assert {
            "X",
            "W_Q",
            "W_K",
            "W_V",
            "W_O",
            "mask",
            "Q",
            "K",
            "V",
            "scores",
            "weights",
            "heads",
            "concat",
            "output",
            "contributions",
            "tokens",
        } <= keys
        t = s.run()
        assert np.array_equal(d["weights"], t.weights)
        assert d["K"].shape == (2, 4, 2) and d["contributions"].shape == (8, 4, 8)
        assert list(d["tokens"]) == s.tokens


def test_failed_write_leaves_nothing_and_keeps_old_file(tmp_path):
    s = load_preset("toy")
    path = tmp_path / "keep.json"
    path.write_text("old")
    from mha_gui.engine.layer.session import atomic_write

    def boom(tmp):
        tmp.write_text("partial")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(path, boom)
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.json"]
    with pytest.raises(ValueError, match="does not exist"):
        save_session(s, tmp_path / "no" / "x.json")


def test_a_trusted_copy_equals_a_checked_one_and_shares_nothing():
    from mha_gui.engine.layer.presets import random_session

    s = random_session(seed=1, tokens=5, d_model=4, heads=2)
    s.mask = np.zeros((5, 5), bool)
    for copy in (s.copy(), s.copy(trusted=True)):
        assert type(copy) is type(s) and copy.tokens == s.tokens and copy.view == s.view
        assert copy.config == s.config and copy.source == s.source
        for name, array in s.params.as_dict().items():
            other = copy.params.as_dict()[name]
            np.testing.assert_array_equal(other, array)
            assert not np.shares_memory(other, array)
        assert not np.shares_memory(copy.mask, s.mask) and copy.tokens is not s.tokens
    s.params.W_Q[0, 0, 0] = np.nan  # an untrusted copy checks again; a trusted one does not
    with pytest.raises(ValueError, match=r"W_Q\[0, 0, 0\] is nan"):
        s.copy()
    assert np.isnan(s.copy(trusted=True).params.W_Q[0, 0, 0])


def test_parameter_checks_name_the_bad_entry_when_a_sum_overflows_or_hides_a_nan():
    from mha_gui.engine.layer.parameters import check_array

    big = np.full((2, 3), 1e308)  # finite entries whose sum overflows
    assert check_array("X", big, (2, 3)) is not None
    bad = np.zeros((2, 3))
    bad[1, 2] = -np.inf
    with pytest.raises(ValueError, match=r"X\[1, 2\] is -inf"):
        check_array("X", bad, (2, 3))
    with pytest.raises(ValueError, match=r"X\[0, 1\] is -2e\+06: values must be within ±1e\+06"):
        check_array("X", [[0, -2e6, 1], [0, 0, 0]], (2, 3), limit=1e6)


def test_a_checked_session_shares_float64_numbers_and_refuses_bad_ones():
    from mha_gui.engine.layer.presets import random_session

    s = random_session(seed=3, tokens=4, d_model=4, heads=2)
    same = s.checked()
    assert same is not s and np.shares_memory(same.params.X, s.params.X)
    s.params.W_K[1, 0, 0] = np.inf
    with pytest.raises(ValueError, match=r"W_K\[1, 0, 0\] is inf"):
        s.checked()
    s.params.W_K[1, 0, 0] = 0.5
    s.params.X.flags.writeable = False  # e.g. a view of a file: copied, since it is edited
    again = s.checked()
    assert again.params.X.flags.writeable and not np.shares_memory(again.params.X, s.params.X)
    assert np.shares_memory(again.params.W_Q, s.params.W_Q)


def test_copy_into_copies_every_matrix_or_only_those_named():
    from mha_gui.engine.layer.presets import random_session

    source = random_session(seed=1, tokens=5, d_model=4, heads=2)
    target = random_session(seed=2, tokens=5, d_model=4, heads=2)
    source.copy_into(target, {"W_Q"})
    np.testing.assert_array_equal(target.params.W_Q, source.params.W_Q)
    assert not np.array_equal(target.params.X, source.params.X)  # not named: left alone
    source.copy_into(target)
    assert target.same_contents(source)
