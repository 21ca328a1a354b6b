"""The conformance suite through tp.function on the numpy backend: every replay (lowered) equals eager; and on a
test backend whose compiler is one ulp off eager, the traced run holds compiled replays to the ulps the backend
declares (Backend.compile_ulps), and step lowerings to eager's bits."""

from __future__ import annotations

from collections.abc import Iterator

import fusing_backend
import numpy as np
import pytest

import tensorplug as tp
from tensorplug.testing import Case, all_cases, run_case

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_conformance_case_replays_as_eager(case: Case) -> None:
    run_case(case, traced=True)


# -- the precision of compiled replays: Backend.compile_ulps --------------------------------------------------------

CASE_IDS = ("Add-float32", "Add-float64-scalars", "Add-grad", "Cast-float-to-int-truncates")


@pytest.fixture
def fusing(request: pytest.FixtureRequest) -> Iterator[None]:
    """The fusing test backend, active, declaring the tolerance ``request.param`` = (compile_ulps, lowering)."""
    compile_ulps, lowering = request.param
    previous = tp.get_backend()
    fusing_backend.register(compile_ulps, lowering)
    tp.set_backend(fusing_backend.NAME)
    try:
        yield
    finally:
        tp.set_backend(previous)
        fusing_backend.unregister()


def chosen_cases() -> list[Case]:
    found = [c for c in CASES if c.id in CASE_IDS]
    assert sorted(c.id for c in found) == sorted(CASE_IDS)
    return found


@pytest.mark.parametrize("fusing", [(0, "compile")], indirect=True)
@pytest.mark.usefixtures("fusing")
def test_a_compiled_replay_one_ulp_off_fails_without_a_declared_tolerance() -> None:
    for case in chosen_cases():
        if case.id == "Cast-float-to-int-truncates":  # integers: the compiler's error does not touch them
            assert run_case(case, traced=True) == 0
            continue
        with pytest.raises(
            AssertionError,
            match=rf"{case.id} \(traced values, output 0\): the replay differs from "
            r"eager by up to 1 ulps; it must give eager's bits",
        ):
            run_case(case, traced=True)


@pytest.mark.parametrize("fusing", [(1, "compile")], indirect=True)
@pytest.mark.usefixtures("fusing")
def test_a_compiled_replay_within_the_declared_ulps_passes_and_says_how_far_it_was() -> None:
    assert [run_case(case, traced=True) for case in chosen_cases()] == [
        0 if case.id == "Cast-float-to-int-truncates" else 1 for case in chosen_cases()
    ]


@pytest.mark.parametrize("fusing", [(1, "steps")], indirect=True)
@pytest.mark.usefixtures("fusing")
def test_the_tolerance_is_for_compiled_replays_only_step_lowerings_give_eagers_bits() -> None:
    (case,) = [c for c in chosen_cases() if c.id == "Add-float32"]
    with pytest.raises(
        AssertionError,
        match=r"Add-float32 \(traced values, output 0\): the replay differs from "
        r"eager by up to 1 ulps; it must give eager's bits",
    ):
        run_case(case, traced=True)


def test_ulps_apart_counts_representable_floats_between_two_values() -> None:
    from tensorplug.testing._traced import ulps_apart

    one = np.float32(1.0)
    up = np.nextafter(np.nextafter(one, np.float32(2.0)), np.float32(2.0))
    assert ulps_apart(np.array([one, 2.0], np.float32), np.array([up, 2.0], np.float32)) == 2
    tiny = np.nextafter(np.float64(0.0), np.float64(1.0))
    assert ulps_apart(np.array([-tiny]), np.array([tiny])) == 2  # across zero: -tiny, (-0 = +0), tiny
    assert ulps_apart(np.array([-0.0, np.nan]), np.array([0.0, np.nan])) == 0
    assert ulps_apart(np.array([np.nan]), np.array([1.0])) is None
    assert ulps_apart(np.array([1], np.int32), np.array([2], np.int32)) is None


def test_the_traced_run_fails_a_backend_that_still_defines_the_removed_lower(monkeypatch: pytest.MonkeyPatch) -> None:
    """tp.function never calls lower(program), so the backend's compiler is lost: each traced case says so, with
    what replaced it, instead of passing through the plain replay."""
    monkeypatch.setattr(type(tp.backend()), "lower", lambda self, program: None, raising=False)
    (case,) = [c for c in CASES if c.id == "Add-float32"]
    with pytest.raises(AssertionError) as failure:
        run_case(case, traced=True)
    message = str(failure.value)
    assert message.startswith(
        "Add-float32 (traced): backend 'numpy' defines lower(program), which the backend contract no longer has "
        "(removed in tensorplug 0.1.0), so the core never calls it: rename it compile(program)"
    ), message
    assert "lower_step(program, index)" in message
    assert "docs/authoring.md" in message
    run_case(case)  # the eager run has nothing to say about it
