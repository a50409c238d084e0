"""The plain-data encoding: exact round trips, and rejection of everything that is not plain data."""

from __future__ import annotations

import math
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coding_framework.sandbox.plain_data import (
    NUMPY_FALSE,
    NUMPY_TRUE,
    DecodeError,
    EncodeError,
    NumpyFloat,
    build_budget,
    decode,
    decode_request,
    encode,
    encode_request,
)
from coding_framework.sandbox.proxy import decode_reply

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary()
hashables = st.recursive(scalars, lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=3),
                         max_leaves=8)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(hashables, inner, max_size=3) | st.sets(hashables, max_size=3),
    max_leaves=20,
)


def same(a, b) -> bool:
    """Equal AND of identical types all the way down (1 == True == 1.0 would hide a type change)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@given(values)
def test_round_trip_keeps_values_and_exact_types(value):
    assert same(decode(encode(value)), value)


def test_special_values_survive():
    data = (True, 1, 1.0, float("inf"), -float("inf"), [1, (2,)], (), [], {}, b"\x00", "é\ud800", 2**200,
            -(2**70), complex(1, -2), range(1, 10, 3), frozenset({1}), {(1, 2): None})
    back = decode(encode(data))
    assert same(back, data)
    assert math.isnan(decode(encode(float("nan"))))
    assert back[0] is True and type(back[1]) is int


def test_iterators_are_drained_into_fresh_iterators():
    back = decode(encode(x * x for x in range(4)))
    assert not isinstance(back, list)
    assert list(back) == [0, 1, 4, 9]


class AlwaysEqual:
    def __eq__(self, other):
        return True


class SneakyInt(int):
    def __eq__(self, other):
        return True


@pytest.mark.parametrize("value", [AlwaysEqual(), SneakyInt(3), [1, SneakyInt(2)], {"k": AlwaysEqual()},
                                   type("S", (str,), {})("x"), type("L", (list,), {})(), object(), len])
def test_non_plain_values_are_refused(value):
    with pytest.raises(EncodeError, match="cannot cross"):
        encode(value)


def test_caps_on_depth_and_size():
    deep: list = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(EncodeError, match="deeper"):
        encode(deep, max_depth=100)
    with pytest.raises(EncodeError, match="larger"):
        encode("x" * 1000, max_bytes=100)
    shared = [0]
    for _ in range(40):  # 2**40 leaves by aliasing, in a few hundred bytes of memory
        shared = [shared, shared]
    with pytest.raises(EncodeError, match="larger"):
        encode(shared, max_bytes=1 << 16, max_depth=100)


@pytest.mark.parametrize("payload", [
    pickle.dumps({"a": 1}),                      # a pickle is not our encoding
    b"l\x00\x00\x00\x05N",                      # count larger than the bytes left
    encode(1) + b"N",                            # trailing bytes
    b"i\xff\xff\xff\xff",                        # oversize int length
    b"s\x00\x00\x00\x02\xff\xfe",               # invalid UTF-8
    b"S\x00\x00\x00\x01l\x00\x00\x00\x00",      # unhashable set element
    b"d\x00\x00\x00\x01l\x00\x00\x00\x00N",     # unhashable dict key
    b"r" + encode(1) + encode(2) + encode(0),    # range with step 0
    b"",
    b"l\x00\x00\x00\x01" * 300 + b"N",         # deeper than the cap
])
def test_malformed_or_foreign_bytes_are_rejected(payload):
    with pytest.raises(DecodeError):
        decode(payload, max_depth=100)


@given(values)
def test_requests_round_trip_with_exact_types(value):
    frame = encode_request(value)
    assert frame[:1] == b"M"  # plain values take the marshal path
    assert same(decode_request(frame), value)


def test_requests_with_ranges_or_iterators_fall_back_to_the_plain_encoding():
    frame = encode_request((range(3), [1, 2]))
    assert frame[:1] == b"P"
    back = decode_request(frame)
    assert back[0] == range(3) and type(back[1]) is list


@pytest.mark.parametrize("value", [SneakyInt(3), (Ellipsis,), [lambda: 1], (1).__add__, {"k": object()},
                                   compile("1", "<x>", "eval")])
def test_requests_refuse_what_marshal_would_take_but_is_not_plain_data(value):
    with pytest.raises(EncodeError, match="cannot cross"):
        encode_request(value)


def test_decoded_replies_share_immutable_values_only():
    ok_list = encode(("ok", [1, 2]))
    first, second = decode_reply(ok_list, 10), decode_reply(ok_list, 10)
    first[1].append(3)
    assert second == ("ok", [1, 2])  # a fresh list each time: the test may mutate what it gets
    assert decode_reply(encode(("ok", (1, "a"))), 10) == ("ok", (1, "a"))
    assert decode_reply(encode(("ok", (1, "a"))), 10) is decode_reply(encode(("ok", (1, "a"))), 10)
    with pytest.raises(DecodeError):
        decode_reply(encode(("ok", [[[1]]])), 2)  # the depth cap holds for every caller


class ForgedInt(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__

    def __index__(self):
        return 999

    def __int__(self):
        return 999


@pytest.mark.parametrize(("value", "held"), [
    (ForgedInt(3), 3),                                  # int's own value, not __index__/__int__/__eq__
    ([1, ForgedInt(2)], [1, 2]),
    (type("S", (str,), {"__str__": lambda self: "forged"})("x"), "x"),
    (type("L", (list,), {"__iter__": lambda self: iter([9])})([1, 2]), [1, 2]),
    (type("D", (dict,), {"items": lambda self: [(9, 9)]})({"a": 1}), {"a": 1}),
    (type("T", (tuple,), {})((1, (2,))), (1, (2,))),
    ({"a": 1, "b": 2}.keys(), {"a", "b"}),
    ({"a": 1}.items(), {("a", 1)}),
])
def test_stand_ins_cross_as_the_exact_builtin_value_they_hold(value, held):
    back = decode(encode(value, stand_ins=True))
    assert same(back, held)
    with pytest.raises(EncodeError, match="cannot cross"):
        encode(value)  # only when asked: the default stays exact types only


def test_numpy_scalars_cross_as_python_scalars_and_arrays_do_not():
    np = pytest.importorskip("numpy")
    values = [np.int64(-7), np.str_("a"), np.complex128(1 + 2j), np.array(4)]
    back = decode(encode(values, stand_ins=True))
    assert same(back, [-7, "a", 1 + 2j, 4])
    for refused in (np.array([1, 2]), {1: 2}.values(), np.datetime64("2020-01-01")):
        with pytest.raises(EncodeError, match="cannot cross"):
            encode(refused, stand_ins=True)



def test_numpy_bools_cross_as_numpy_bools_not_as_true_and_false():
    # `candidate(x) is True` fails for numpy's bool in the official harness (HumanEval/72); `==`,
    # truthiness, hashing and int() behave as numpy's do.
    np = pytest.importorskip("numpy")
    back = decode(encode([np.bool_(True), np.False_, np.array(True), np.array(False)], stand_ins=True))
    assert back == [NUMPY_TRUE, NUMPY_FALSE, NUMPY_TRUE, NUMPY_FALSE]
    assert back[0] is NUMPY_TRUE and back[1] is NUMPY_FALSE
    true, false = back[0], back[1]
    assert true is not True and not isinstance(true, bool) and type(true) is not bool
    assert true == True and true == 1 and true == 1.0 and true != False and true != 2  # noqa: E712
    assert false == False and false == 0 and not false and bool(true)  # noqa: E712
    assert true != "True" and true != [True] and true != None  # noqa: E711
    assert hash(true) == hash(True) and {True: "x"}[true] == "x"
    assert int(true) == 1 and float(false) == 0.0 and str(true) == "True" and repr(false) == "np.False_"
    assert decode_request(encode_request((true, [false]))) == (NUMPY_TRUE, [NUMPY_FALSE])
    with pytest.raises(DecodeError, match="numpy bool"):
        decode(b"B2")


def test_numpy_floats_cross_as_floats_of_another_type():
    # evalplus checks `type(out) == type(expected)` before its tolerance: np.mean's np.float64 answer,
    # not bit-equal to the float expected, fails there; it crossed as a float and passed (round 41).
    np = pytest.importorskip("numpy")
    back = decode(encode([np.float64(2.5), np.float32(0.5), np.array(1.25)], stand_ins=True), answers=True)
    assert back == [2.5, 0.5, 1.25] and [type(x) for x in back] == [NumpyFloat] * 3
    assert isinstance(back[0], float) and back[0] + 1 == 3.5 and math.isclose(back[0], 2.5)
    again = decode_request(encode_request(back))  # the test may hand it back to the candidate
    assert again == back and type(again[0]) is NumpyFloat


def test_numpy_bools_and_floats_compute_as_numpy_does():
    t, f = NUMPY_TRUE, NUMPY_FALSE
    assert sum([t, f, t]) == 2 and t + 1 == 2 and 2 * t == 2 and t / 2 == 0.5 and 3 // t == 3
    assert (t + t) is t and (t * f) is f and (t + True) is t  # with bools: or, and
    assert (t & True) is t and (f | False) is f and (True ^ t) is f and ~t is f and (t & 3) == 1
    assert (t < 2) is t and (t > 0.5) is t and (f >= 1) is f
    with pytest.raises(TypeError):
        t - f  # numpy refuses `-` of two bools
    with pytest.raises(TypeError):
        ["n", "y"][t]  # numpy's bool is no index either
    with pytest.raises(ValueError, match="negative integer powers"):
        t ** -1
    one, zero = NumpyFloat(1.0), NumpyFloat(0.0)
    assert one / 0 == math.inf and -1 / zero == -math.inf and math.isnan(zero / 0) and one / 4 == 0.25
    assert one // 0 == math.inf and math.isnan(one % 0) and divmod(NumpyFloat(7.5), 2) == (3.0, 1.5)
    assert math.isnan(NumpyFloat(-2.0) ** 1.5) and zero ** -1 == math.inf and 2 ** NumpyFloat(0.5) > 1.41
    assert type(one / 4) is NumpyFloat and type(one // 4) is NumpyFloat


def test_the_standard_librarys_mappings_and_namedtuples_arrive_as_such():
    import collections

    point = collections.namedtuple("Point", "x y")
    values = [collections.Counter("aab"), collections.OrderedDict([(2, "b"), (1, "a")]),
              collections.defaultdict(list, {"k": [1]}), collections.defaultdict(lambda: 5, {"k": 1}),
              point(1, (2, 3))]
    counter, ordered, listing, other, pt = decode(encode(values, stand_ins=True), answers=True)
    assert type(counter) is collections.Counter and counter == {"a": 2, "b": 1} and counter["z"] == 0
    assert type(ordered) is collections.OrderedDict and list(ordered) == [2, 1]
    assert type(listing) is collections.defaultdict and listing["new"] == [] and listing["k"] == [1]
    assert type(other) is dict and other == {"k": 1}  # a factory of the candidate's cannot cross (round 43)
    assert pt == (1, (2, 3)) and pt.x == 1 and pt.y == (2, 3) and type(pt).__name__ == "Point"
    assert type(pt) is not point and type(pt).__module__ == "candidate"  # the trusted side's own class
    assert decode_request(encode_request(values)) == values  # and back to the candidate


def test_rebuilds_keep_order_and_fresh_defaults_and_namedtuples_only_when_real():
    # Round 42: an OrderedDict after move_to_end crossed in its storage order (a wrong order passed);
    # any tuple subclass with `_fields` crossed as a namedtuple (`.x` read by position). Round 43: a key
    # set past an OrderedDict's order (dict.__setitem__) was left out.
    import collections

    ordered = collections.OrderedDict([("a", 1), ("b", 2)])
    ordered.move_to_end("a")
    sub = type("Sub", (collections.OrderedDict,), {})([("x", 1), ("y", 2)])
    sub.move_to_end("x")
    lists = collections.defaultdict(list, {})
    fake = type("Fake", (tuple,), {"_fields": ("x", "y"), "x": property(lambda self: self[1])})((1, 2))
    wide = collections.namedtuple("Wide", [f"f{i}" for i in range(65)])(*range(65))
    back = decode(encode([ordered, sub, lists, fake, wide], stand_ins=True), answers=True)
    assert list(back[0]) == ["b", "a"] and list(back[1]) == ["y", "x"]
    assert back[0] != collections.OrderedDict([("a", 1), ("b", 2)])  # order counts between OrderedDicts
    back[2]["p"].append(1)
    assert back[2]["q"] == [] and back[2]["p"] == [1]  # a fresh default each time
    assert type(back[3]) is tuple and type(back[4]) is tuple  # not a real namedtuple; over 64 fields
    inconsistent = collections.OrderedDict(a=1)
    dict.__setitem__(inconsistent, "b", 2)
    with pytest.raises(EncodeError, match="order and contents disagree"):
        encode(inconsistent, stand_ins=True)


def test_answer_rebuilds_are_refused_where_no_answer_is_expected():
    for frame in (encode(1.5).replace(b"f", b"h", 1), b"C" + encode({}),
                  b"n" + encode("P") + encode(("x",)) + encode((1,))):
        assert decode(frame, answers=True) is not None
        with pytest.raises(DecodeError, match="answers only"):
            decode(frame)


def test_forged_mappings_and_namedtuples_are_refused_or_plain():
    import collections

    name, fields, items = encode("class"), encode(("x",)), encode((1,))
    plain = decode(b"n" + name + fields + items, answers=True)  # `class` is no field name: a tuple
    assert plain == (1,) and type(plain) is tuple
    # Names equal once normalised (NFKC) made namedtuple raise SyntaxError, which escaped the judge's
    # decoder (round 42): a tuple.
    same = decode(b"n" + encode("P") + encode(("\ufb01", "fi")) + encode((1, 2)), answers=True)
    assert same == (1, 2) and type(same) is tuple
    with pytest.raises(DecodeError, match="malformed namedtuple"):
        decode(b"n" + encode("P") + encode(("x", "y")) + items, answers=True)  # two fields, one value
    with pytest.raises(DecodeError, match="malformed namedtuple"):  # over the field cap: one eval too long
        decode(b"n" + encode("P") + encode(tuple(f"f{i}" for i in range(65))) + encode(tuple(range(65))),
               answers=True)
    many = [collections.namedtuple(f"P{i}", "x")(i) for i in range(400)]  # 400 classes to make
    with pytest.raises(DecodeError, match="to build"):
        decode(encode(many), answers=True)
    with pytest.raises(DecodeError, match="factory"):
        decode(b"D" + encode("eval") + encode({}), answers=True)
    with pytest.raises(DecodeError, match="malformed mapping"):
        decode(b"C" + encode([1]), answers=True)


def test_more_builtin_iterators_cross_drained():
    import itertools

    values = [reversed([1, 2]), itertools.chain([1], (2,)), itertools.islice(itertools.count(5), 2),
              itertools.accumulate([1, 2, 3]), iter(iter([7]).__next__, 0), reversed({"a": 1}.keys())]
    assert [list(v) for v in decode(encode(values))] == [[2, 1], [1, 2], [5, 6], [1, 3, 6], [7], ["a"]]


def test_an_iterator_that_raises_while_drained_arrives_with_its_items_and_record():
    def lazily_checked():
        yield 1
        raise ValueError("later")

    frame = encode(lazily_checked(), raised=lambda exc: ("raised", type(exc).__name__, str(exc)))
    got = decode(frame, answers=True, raised=lambda items, record: (items, record))
    assert got == ([1], ("raised", "ValueError", "later"))
    with pytest.raises(DecodeError, match="raised is not expected"):
        decode(frame)
    with pytest.raises(ValueError, match="later"):
        encode(lazily_checked())  # without `raised`, the exception is the encoder's caller's


def test_an_iterator_record_the_child_never_sends_is_malformed():
    # A forged record of kind "fatal" (SystemExit) became a catchable CandidateError, so a test wrapping
    # its loop in `except Exception` passed (round 42); the child lets such exceptions end the call.
    import struct

    prefix = encode(("ok", None))[:-1]
    for kind, name in (("fatal", "SystemExit"), ("builtin", "MemoryError")):
        record = encode(("raise", name, "", kind, (), "Exception"))
        with pytest.raises(DecodeError, match="malformed exception record"):
            decode_reply(prefix + b"G" + struct.pack(">I", 0) + record, 10)
    fine = encode(("raise", "ValueError", "m", "builtin", ("m",), "ValueError"))
    _, iterator = decode_reply(prefix + b"G" + struct.pack(">I", 1) + encode(7) + fine, 10)
    assert next(iterator) == 7
    with pytest.raises(ValueError, match="m"):
        next(iterator)


def test_sets_of_many_values_sharing_one_hash_are_refused():
    m = 2 ** 61 - 1  # multiples of the modulus of int hashing all hash to 0
    colliding = bytearray(encode([m * i for i in range(1000)]))
    colliding[:1] = b"S"
    with pytest.raises(DecodeError, match="1000 set elements or dict keys share one hash"):
        decode(bytes(colliding))
    frozen = bytes(b"z" + colliding[1:])
    with pytest.raises(DecodeError, match="share one hash"):
        decode(frozen)
    few = {m * i for i in range(64)} | {-1, -2} | set(range(5000))  # a few shared hashes are fine
    assert decode(encode(few)) == few


def test_dicts_of_many_keys_sharing_one_hash_are_refused():
    # Each key was inserted as it was read: quadratic in the number of colliding keys, and a 3 MB reply
    # of 200k such keys held the judge for minutes.
    m = 2 ** 61 - 1
    with pytest.raises(DecodeError, match="1000 set elements or dict keys share one hash"):
        decode(encode({m * i: i for i in range(1000)}))
    few = {**{m * i: i for i in range(64)}, -1: "a", -2: "b", **{i: i for i in range(100, 5000)}}
    assert decode(encode(few)) == few
    assert list(decode(encode({3: 1, 1: 2, 2: 3}))) == [3, 1, 2]  # order kept


def test_containers_out_of_proportion_to_their_bytes_are_refused():
    n = 1_000_000  # 1M empty sets: 5 MB of encoding, ~216 MB to build
    with pytest.raises(DecodeError, match="MiB to build"):
        decode(b"l" + n.to_bytes(4, "big") + b"S\x00\x00\x00\x00" * n)
    pairs = [(i, i + 1) for i in range(200_000)]  # an honest big value: ~4x its bytes
    data = encode(pairs)
    assert 64 * len(pairs) < build_budget(len(data))
    assert decode(data) == pairs

def test_a_stand_in_that_cannot_be_read_is_an_encode_error():
    with pytest.raises(EncodeError, match="could not be read"):
        encode({"k": [1]}.items(), stand_ins=True)  # an items view with an unhashable value
