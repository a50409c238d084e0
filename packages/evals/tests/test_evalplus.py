"""HumanEval+ / MBPP+ without the sandbox: file loading, MBPP+ argument shapes, expected outputs and
reference timings, the cache, the time-limit rule, and evalplus's comparison rules one by one."""

from __future__ import annotations

import json
import math
import tracemalloc

import pytest
from conftest import FIXTURES

from coding_framework.evals.datasets import evalplus_oracle
from coding_framework.evals.datasets.evalplus import (
    EvalPlusProblem,
    load_humaneval_plus,
    load_mbpp_plus,
    mbpp_plus_arguments,
)
from coding_framework.evals.datasets.evalplus_checker import (
    check_inputs,
    is_floats,
    output_matches,
    same_shape,
)
from coding_framework.evals.datasets.evalplus_jobs import evalplus_jobs, per_input_limits
from coding_framework.evals.datasets.evalplus_oracle import attach_oracles, compute_oracles, oracle_warnings
from coding_framework.evals.datasets.evalplus_program import guarded_program
from coding_framework.evals.errors import DatasetNotFoundError, InputFileError
from coding_framework.sandbox import FunctionCallJob, Status, Verdict

HE_PLUS = FIXTURES / "HumanEvalPlus-fixture.jsonl"
MBPP_PLUS = FIXTURES / "MbppPlus-fixture.jsonl.gz"


def test_loads_humaneval_plus_fields_in_file_order():
    problems = load_humaneval_plus(HE_PLUS)
    assert list(problems) == [f"HumanEvalPlusFixture/{i}" for i in range(4)]
    p = problems["HumanEvalPlusFixture/1"]
    assert (p.dataset, p.entry_point, p.atol) == ("humaneval", "circle_area", 1e-3)
    assert p.base_input == [[1.0], [2.5], [0.0]] and p.plus_input == [[10.0], [0.001], [-1.0]]
    assert p.reference_program == p.prompt + "    return math.pi * r * r\n"
    assert p.contract_program == p.prompt + p.contract + p.canonical_solution
    assert p.oracle is None


def test_mbpp_plus_arguments_are_rebuilt_as_evalplus_does():
    problems = load_mbpp_plus(MBPP_PLUS)
    assert problems["Mbpp/2"].base_input[0] == [(3, 4, 5, 6), (5, 7, 4, 10)]  # lists → tuples
    assert problems["Mbpp/124"].base_input[0] == [0.0, 1j]  # strings → complex
    assert problems["Mbpp/3"].base_input[0] == [2]  # untouched
    # Mbpp/115: a list of lists becomes a list of sets, an empty one becomes {} (a dict), as evalplus.
    assert mbpp_plus_arguments("Mbpp/115", [[[[1, 2], []]]]) == [[[{1, 2}, {}]]]
    assert mbpp_plus_arguments("Mbpp/580", [[[1, [2, 3]], 4]]) == [[(1, (2, 3)), 4]]
    assert mbpp_plus_arguments("Mbpp/722", [[{"a": [1, 2]}, 3]]) == [[{"a": (1, 2)}, 3]]
    assert mbpp_plus_arguments("Mbpp/259", [[[[1, 2]], [[3, 4]]]]) == [[((1, 2),), ((3, 4),)]]
    # the contract goes right after the def line for MBPP+
    program = problems["Mbpp/2"].contract_program
    assert program.index("def similar_elements") < program.index("assert isinstance(test_tup1, tuple)")


@pytest.mark.parametrize(
    ("row", "bad"),
    [
        ({"atol": -1}, "atol"),
        ({"base_input": [1, 2]}, "base_input"),
        ({"contract": None}, "contract"),
    ],
)
def test_malformed_rows_name_file_line_and_field(tmp_path, row, bad):
    good = json.loads(HE_PLUS.read_text().splitlines()[0])
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "task_id": "X/1", **row}) + "\n")
    with pytest.raises(InputFileError, match=rf"p\.jsonl:2: .*malformed: {bad}$"):
        load_humaneval_plus(path)


def test_missing_file_names_the_variables_and_where_to_get_it(tmp_path, monkeypatch):
    with pytest.raises(DatasetNotFoundError) as err:
        load_humaneval_plus()
    message = str(err.value)
    assert "CF_EVALS_HUMANEVAL_PLUS" in message and "CF_EVALS_DATA_DIR" in message
    assert "humanevalplus_release" in message and "--problem-file" in message
    monkeypatch.setenv("CF_EVALS_DATA_DIR", str(FIXTURES))
    with pytest.raises(DatasetNotFoundError, match=r"HumanEvalPlus\.jsonl\.gz"):
        load_humaneval_plus()  # the fixture is not under an official name
    monkeypatch.setenv("CF_EVALS_MBPP_PLUS", str(tmp_path / "nope.jsonl"))
    with pytest.raises(DatasetNotFoundError, match=r"nope\.jsonl \(from \$CF_EVALS_MBPP_PLUS\)"):
        load_mbpp_plus()
    monkeypatch.setenv("CF_EVALS_MBPP_PLUS", str(MBPP_PLUS))
    assert "Mbpp/2" in load_mbpp_plus()


def test_oracle_holds_reference_outputs_times_and_contract_violations(oracle_cache):
    problems = attach_oracles(load_humaneval_plus(HE_PLUS), cache_dir=oracle_cache)
    mean = problems["HumanEvalPlusFixture/0"].oracle
    assert mean.base == ([1.0, 1.5, 2.0], [0.1, pytest.approx(0.15000000000000002)], [])
    assert len(mean.plus) == 3 and len(mean.base_time_s) == 3 and all(t >= 0 for t in mean.plus_time_s)
    assert mean.contract_violations == () and mean.error == ""
    primes = problems["HumanEvalPlusFixture/3"].oracle
    assert primes.base == (4, 0, 25) and primes.plus == (2262, 0, 0)
    assert primes.contract_violations == ("plus input 2: AssertionError: invalid inputs",)
    warnings = oracle_warnings(problems)
    assert any(w.startswith("HumanEvalPlusFixture/3: 1 input(s) break the task's contract") for w in warnings)


def test_mbpp_not_none_tasks_store_booleans(oracle_cache):
    problem = EvalPlusProblem(
        task_id="Mbpp/9001",
        dataset="mbpp",
        prompt='"""x"""\n',
        entry_point="check_str",
        canonical_solution="import re\ndef check_str(s):\n    return re.match('^[aeiou]', s)\n",
        contract="",
        base_input=[["apple"], ["kiwi"]],
        plus_input=[],
        atol=0.0,
    )
    (oracle,) = compute_oracles([problem], cache_dir=oracle_cache).values()
    assert oracle.base == (True, False)  # re.Match objects are not plain data; evalplus keeps `is not None`


def test_failing_reference_makes_the_task_unscorable_not_the_run(oracle_cache):
    broken = EvalPlusProblem(
        task_id="T/1",
        dataset="humaneval",
        prompt="def f(x):\n",
        entry_point="f",
        canonical_solution="    return 1 // x\n",
        contract="",
        base_input=[[1], [0]],
        plus_input=[],
        atol=0.0,
    )
    odd = EvalPlusProblem(
        task_id="T/2",
        dataset="humaneval",
        prompt="def g():\n",
        entry_point="g",
        canonical_solution="    return object()\n",
        contract="",
        base_input=[[]],
        plus_input=[],
        atol=0.0,
    )
    oracles = compute_oracles([broken, odd], cache_dir=oracle_cache)
    assert (
        oracles["T/1"].error
        == "the reference raised on base input 1: ZeroDivisionError: integer division or modulo by zero"
    )
    assert "not plain data" in oracles["T/2"].error
    jobs = evalplus_jobs(attach_oracles({"T/1": broken}, cache_dir=oracle_cache)["T/1"], "    return 1\n")
    assert all(isinstance(v, Verdict) and v.status is Status.SANDBOX_ERROR for v in jobs.values())


def test_reference_outputs_are_stored_as_the_plain_values_they_stand_for(oracle_cache):
    # marshal stores any buffer (a numpy scalar or array, a bytearray) as bytes: np.mean's 1.5 became
    # b'\x00...\xf8?', which no answer equals, the reference's own included (red-team round 15).
    def returning(task_id, body, imports="import numpy as np\nimport collections\n"):
        return EvalPlusProblem(task_id=task_id, dataset="humaneval", prompt=imports + "def f(xs):\n",
                               entry_point="f", canonical_solution=body, contract="",
                               base_input=[[[1.0, 2.0]]], plus_input=[], atol=0.0)

    problems = [
        returning("N/0", "    return np.mean(xs)\n"),
        returning("N/1", "    return [np.int64(len(xs)), np.bool_(True), np.float32(0.5)]\n"),
        returning("N/2", "    P = collections.namedtuple('P', 'a b')\n    return P(*xs)\n"),
        returning("N/3", "    return collections.Counter(['a', 'a'])\n"),
        returning("N/4", "    return np.array(xs)\n"),
        returning("N/5", "    return bytearray(b'xs')\n"),
    ]
    oracles = compute_oracles(problems, cache_dir=oracle_cache)
    stored = {task_id: oracles[task_id].base[0] for task_id in ("N/0", "N/1", "N/2", "N/3")}
    assert stored == {"N/0": 1.5, "N/1": [2, True, 0.5], "N/2": (1.0, 2.0), "N/3": {"a": 2}}
    assert [type(v) for v in stored.values()] == [float, list, tuple, dict]
    assert [type(v) for v in stored["N/1"]] == [int, bool, float]
    for task_id, kind in (("N/4", "ndarray"), ("N/5", "bytearray")):
        assert oracles[task_id].error == (f"the reference's output on base input 0 is a {kind}, not plain "
                                          "data; no candidate output could be compared with it")


def test_oracles_are_cached_per_task_and_machine(tmp_path, monkeypatch):
    problems = load_humaneval_plus(HE_PLUS)
    first = compute_oracles(problems.values(), cache_dir=tmp_path)
    assert len(list((tmp_path / "evalplus-oracles").iterdir())) == 4

    def no_child(tasks, timeout):
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(evalplus_oracle, "_run_child", no_child)
    again = compute_oracles(problems.values(), cache_dir=tmp_path)
    assert {t: o.base for t, o in again.items()} == {t: o.base for t, o in first.items()}
    monkeypatch.setattr(evalplus_oracle, "machine_fingerprint", lambda: "another-host")
    with pytest.raises(AssertionError, match="cache should have answered"):
        compute_oracles(problems.values(), cache_dir=tmp_path)


def test_per_input_limit_is_evalplus_rule():
    assert per_input_limits((0.001, 2.0), min_time_limit_s=4.0, time_limit_factor=4.0) == (4.0, 8.0)
    assert per_input_limits((0.5,), min_time_limit_s=0.1, time_limit_factor=2.0) == (1.0,)


def test_jobs_carry_limits_from_the_reference_times(oracle_cache):
    problem = attach_oracles(load_humaneval_plus(HE_PLUS), cache_dir=oracle_cache)["HumanEvalPlusFixture/0"]
    jobs = evalplus_jobs(
        problem, "    return xs\n", timeout_s=60.0, min_time_limit_s=0.5, time_limit_factor=4.0
    )
    assert set(jobs) == {"base", "plus"}
    base = jobs["base"]
    # the sample's code runs inside evalplus's guard (evalplus_program), compiled as it was written
    assert isinstance(base, FunctionCallJob) and base.entry_point == "running_mean"
    assert base.program == guarded_program(problem.prompt + "    return xs\n", "humaneval", "running_mean")[0]
    assert repr(problem.prompt + "    return xs\n") in base.program
    assert base.limits.timeout_s == pytest.approx(3 * 0.5 + 2.0)  # min(60, sum of limits) + start-up
    assert base.limits.memory_mb == 4096
    capped = evalplus_jobs(problem, "", timeout_s=1.0)["plus"]
    assert capped.limits.timeout_s == pytest.approx(1.0 + 2.0)
    with_solution = evalplus_jobs(problem, "ignored", solution="def running_mean(xs): ...")["base"].program
    assert repr("def running_mean(xs): ...") in with_solution and "ignored" not in with_solution


# -- the comparison rules -------------------------------------------------------------------------
def _match(out, expected, atol=0.0, entry_point="f", dataset="humaneval", args=()):
    return output_matches(dataset, entry_point, list(args), out, expected, atol)


def test_exact_matches_and_python_equality():
    assert _match([1, 2], [1, 2]) == (True, 0.0)
    assert _match(1, 1.0)[0]  # == as in evalplus: an int equal to the float passes
    assert not _match((1, 2), [1, 2])[0]
    assert not _match("1", 1)[0]


def test_float_outputs_get_an_implicit_tolerance_that_sticks():
    assert _match(0.30000000000000004, 0.3) == (True, 1e-6)
    assert _match(1.0000001, 1.0) == (True, 1e-6)
    assert not _match(1.00001, 1.0)[0]
    assert _match([0.1 + 0.2, 1.0], [0.3, 1.0]) == (True, 1e-6)
    # once set, 1e-6 applies to later non-float outputs too (evalplus reassigns its atol variable)
    assert _match([1000000], [1000001], atol=1e-6)[0] is False
    assert _match([1, 2], [1, 3], atol=1e-6)[0] is False


def test_explicit_atol_and_type_rules():
    assert _match(3.1421, 3.14159, atol=1e-3) == (True, 1e-3)
    assert not _match(3.15, 3.14159, atol=1e-3)[0]
    assert not _match([3.1421], (3.14159,), atol=1e-3)[0]  # type differs
    assert not _match([1.0], [1.0, 2.0], atol=1e-3)[0]  # length differs
    assert not _match("a", 1.0, atol=1e-3)[0]  # allclose raises: a failed input, not a crash
    assert not _match(math.nan, math.nan)[0]


def test_a_numpy_float_within_the_tolerance_fails_the_type_check_as_in_evalplus():
    # The sandbox hands the trusted test a numpy float as a NumpyFloat (a float of another type), so the
    # answer np.mean gives, not bit-equal to the float expected, fails as evalplus's `type(out) ==
    # type(exp)` fails it (red-team round 41); an exactly equal one passes on `==`.
    from coding_framework.sandbox.plain_data import NumpyFloat

    assert _match(0.1, 0.09999999999999999) == (True, 1e-6)
    assert _match(NumpyFloat(0.1), 0.09999999999999999) == (False, 1e-6)
    assert _match(NumpyFloat(0.25), 0.25) == (True, 1e-6)


def test_an_output_nesting_otherwise_than_the_expected_one_is_refused():
    answer = [0.1, 0.2, 0.3]
    assert _match([0.1000000001, 0.2, 0.3], answer) == (True, 1e-6)
    # evalplus lets numpy.allclose broadcast these against the answer, and passes them
    assert not _match([answer] * 3, answer)[0]  # (3, 3) against (3,)
    assert not _match([[x] for x in answer], answer)[0]  # (3, 1)
    assert not _match([0.1, [0.2], 0.3], answer)[0]
    assert same_shape([(1.0, 2.0), [3.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]])
    assert not same_shape([[1.0, 2.0], [3.0]], [[1.0, 2.0], [3.0, 4.0]])


def test_a_reply_built_to_broadcast_costs_the_judge_nothing_like_its_broadcast():
    # Shape (100, 500, 1) against an expected (100,): allclose would build 100 * 500 * 100 items
    # (about 95 MB here; the candidate picks the sizes) in the judge, which has no memory limit.
    expected = [i / 100 for i in range(100)]
    reply = [[(True,)] * 500] * 100
    tracemalloc.start()
    try:
        assert _match(reply, expected) == (False, 1e-6)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def test_special_oracles():
    assert _match(-0.5000000001, -0.5, atol=1e-6, entry_point="find_zero", args=[[1, 2]])[0]
    assert not _match(0.1, -0.5, atol=1e-6, entry_point="find_zero", args=[[1, 2]])[0]
    mbpp = {"dataset": "mbpp"}
    assert _match([5, 4], (4, 5), entry_point="similar_elements", **mbpp)[0]  # set equality
    assert _match("anything", False, entry_point="are_equivalent", **mbpp)[0]
    assert _match(0, 7, entry_point="sum_div", **mbpp)[0]
    assert _match(65, 33, entry_point="surface_Area", args=(3, 4), **mbpp)[0] is False
    assert _match(33, 33, entry_point="surface_Area", args=(3, 4), **mbpp)[0]
    assert _match(
        round(9 + 2 * 3 * math.sqrt(2.25 + 16)), 33, entry_point="surface_Area", args=(3, 4), **mbpp
    )[0]
    assert _match("match", True, entry_point="check_str", **mbpp)[0]
    assert not _match(None, True, entry_point="check_str", **mbpp)[0]
    assert is_floats([1.0, 2.0]) and not is_floats([]) and not is_floats([1.0, 2])


def test_check_inputs_names_the_failing_input_and_the_time_limit():
    calls = []

    def candidate(x):
        calls.append(x)
        return x * 2

    check_inputs(candidate, "humaneval", "f", "base", [[1], [2]], [2, 4], [1.0, 1.0], 0.0)
    with pytest.raises(AssertionError, match=r"plus input 1: f\(\*\[3\]\) returned 6, expected 7"):
        check_inputs(candidate, "humaneval", "f", "plus", [[1], [3], [4]], [2, 7, 8], [1.0] * 3, 0.0)
    assert calls == [1, 2, 1, 3]  # stops at the first failing input

    def slow(x):
        import time

        time.sleep(0.05)
        return x

    with pytest.raises(AssertionError, match=r"base input 0: took 0\.0\d+s, over its 0\.010s limit"):
        check_inputs(slow, "humaneval", "f", "base", [[1]], [1], [0.01], 0.0)
