"""tp.initializers: fans in this project's layouts (checked against torch.nn.init's formulas, written out here by
hand for the equivalent torch shapes), the statistics of each random initialiser with a fixed seed, truncation,
seeding, dtypes, errors, and the python blocks of docs/initializers.md."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import tensorplug as tp

DOC = Path(__file__).resolve().parents[2] / "docs" / "initializers.md"


# -- fans -------------------------------------------------------------------------------------------------------------
# torch.nn.init._calculate_fan_in_and_fan_out, for a torch weight [out, in, *kernel]: receptive = prod(kernel),
# fan_in = in * receptive, fan_out = out * receptive. The same weights here are [in, out] (dense) and
# [*kernel, in, out] (conv), so each row below gives the torch shape it stands for and the fans torch computes.


@pytest.mark.parametrize(
    ("shape", "torch_shape", "fan_in", "fan_out"),
    [
        ((784, 128), (128, 784), 784, 128),  # nn.Linear(784, 128): weight [128, 784]
        ((3, 3, 16, 32), (32, 16, 3, 3), 144, 288),  # nn.Conv2d(16, 32, 3): 16 * 9, 32 * 9
        ((5, 5, 1, 8), (8, 1, 5, 5), 25, 200),  # nn.Conv2d(1, 8, 5)
        ((7, 4, 6), (6, 4, 7), 28, 42),  # nn.Conv1d(4, 6, 7)
        ((2, 3, 4, 5, 6), (6, 5, 2, 3, 4), 120, 144),  # nn.Conv3d(5, 6, (2, 3, 4)): 5 * 24, 6 * 24
        ((1, 1, 64, 10), (10, 64, 1, 1), 64, 10),  # a 1x1 convolution is a dense layer per pixel
    ],
)
def test_fans_match_torch_for_the_same_weight(
    shape: tuple[int, ...], torch_shape: tuple[int, ...], fan_in: int, fan_out: int
) -> None:
    assert tp.initializers.fans(shape) == (fan_in, fan_out)


def test_fans_of_vectors_and_scalars() -> None:
    assert tp.initializers.fans((10,)) == (10, 10)
    assert tp.initializers.fans(()) == (1, 1)


# -- statistics -------------------------------------------------------------------------------------------------------
SHAPE = (300, 200)  # 60,000 samples: the sample std is within 1 % of the true one (its relative error ~0.3 %)
N = 60_000


def stats(t: tp.Tensor) -> tuple[float, float, float]:
    values = t.numpy().astype(np.float64)
    return float(values.mean()), float(values.std()), float(np.abs(values).max())


def check_moments(t: tp.Tensor, std: float, mean: float = 0.0) -> None:
    got_mean, got_std, _ = stats(t)
    assert abs(got_mean - mean) < 4 * std / math.sqrt(N), (got_mean, mean)  # 4 standard errors
    assert abs(got_std / std - 1) < 0.02, (got_std, std)


@pytest.mark.parametrize(
    ("make", "limit"),
    [
        # xavier_uniform_: gain * sqrt(6 / (fan_in + fan_out)), fan_in 300, fan_out 200
        (lambda s: tp.initializers.glorot_uniform(s, seed=1), math.sqrt(6 / 500)),
        (lambda s: tp.initializers.xavier_uniform(s, gain=5 / 3, seed=1), 5 / 3 * math.sqrt(6 / 500)),  # tanh's gain
        # kaiming_uniform_(a=0, mode="fan_in", nonlinearity="relu"): sqrt(2) * sqrt(3 / 300)
        (lambda s: tp.initializers.he_uniform(s, seed=1), math.sqrt(2) * math.sqrt(3 / 300)),
        # kaiming_uniform_(a=0.2, mode="fan_out", nonlinearity="leaky_relu"): sqrt(2 / 1.04) * sqrt(3 / 200)
        (
            lambda s: tp.initializers.kaiming_uniform(s, negative_slope=0.2, mode="fan_out", seed=1),
            math.sqrt(2 / 1.04) * math.sqrt(3 / 200),
        ),
        # LeCun uniform: sqrt(3 / fan_in)
        (lambda s: tp.initializers.lecun_uniform(s, seed=1), math.sqrt(3 / 300)),
        (lambda s: tp.initializers.random_uniform(s, -0.05, 0.05, seed=1), 0.05),
    ],
)
def test_uniform_initialisers_fill_their_interval(make: Callable[..., tp.Tensor], limit: float) -> None:
    t = make(SHAPE)
    assert t.shape == SHAPE
    assert t.dtype == "float32"
    _, _, largest = stats(t)
    assert largest <= limit * (1 + 1e-6)
    assert largest > limit * 0.999  # 60,000 uniform samples reach within 0.1 % of the bound
    check_moments(t, limit / math.sqrt(3))  # the std of a uniform on [-limit, limit]


@pytest.mark.parametrize(
    ("make", "std"),
    [
        (lambda s: tp.initializers.glorot_normal(s, seed=2), math.sqrt(2 / 500)),  # xavier_normal_
        (lambda s: tp.initializers.xavier_normal(s, gain=2.0, seed=2), 2.0 * math.sqrt(2 / 500)),
        (lambda s: tp.initializers.he_normal(s, seed=2), math.sqrt(2 / 300)),  # kaiming_normal_(relu)
        (lambda s: tp.initializers.kaiming_normal(s, mode="fan_out", seed=2), math.sqrt(2 / 200)),
        (lambda s: tp.initializers.lecun_normal(s, seed=2), math.sqrt(1 / 300)),
        (lambda s: tp.initializers.variance_scaling(s, 3.0, "fan_avg", "normal", seed=2), math.sqrt(3 / 250)),
        (lambda s: tp.initializers.random_normal(s, 0.0, 0.02, seed=2), 0.02),
    ],
)
def test_normal_initialisers_have_their_standard_deviation(make: Callable[..., tp.Tensor], std: float) -> None:
    t = make(SHAPE)
    assert t.shape == SHAPE
    assert t.dtype == "float32"
    check_moments(t, std)
    _, _, largest = stats(t)
    assert largest > 3 * std  # untruncated: 60,000 samples go beyond 3 std (all but certainly: p ~ 1e-70 otherwise)


def test_truncated_normal_stays_within_two_stddev_with_the_truncated_spread() -> None:
    t = tp.initializers.truncated_normal(SHAPE, mean=1.5, stddev=0.5, seed=3)
    values = t.numpy().astype(np.float64)
    assert values.min() >= 1.5 - 1.0 - 1e-6
    assert values.max() <= 1.5 + 1.0 + 1e-6
    assert values.min() < 0.51
    assert values.max() > 2.49
    # a standard normal truncated to [-2, 2] has std sqrt(1 - 4 phi(2) / (2 Phi(2) - 1)) = 0.8796...
    truncated_std = math.sqrt(1 - 4 * math.exp(-2) / math.sqrt(2 * math.pi) / math.erf(2 / math.sqrt(2)))
    assert abs(truncated_std - 0.87962566103423978) < 1e-12
    check_moments(t, 0.5 * truncated_std, mean=1.5)


def test_variance_scaling_corrects_the_truncated_normal_for_the_truncation() -> None:
    t = tp.initializers.variance_scaling(SHAPE, 2.0, "fan_in", "truncated_normal", seed=4)
    limit = 2 * math.sqrt(2 / 300) / 0.87962566103423978
    assert np.abs(t.numpy()).max() <= limit * (1 + 1e-6)
    check_moments(t, math.sqrt(2 / 300))  # the variance asked for: scale / fan_in


# -- seeds, dtypes, constants ------------------------------------------------------------------------------------------

RANDOM = [
    tp.initializers.glorot_uniform,
    tp.initializers.glorot_normal,
    tp.initializers.he_uniform,
    tp.initializers.he_normal,
    tp.initializers.lecun_uniform,
    tp.initializers.lecun_normal,
    tp.initializers.truncated_normal,
    tp.initializers.random_uniform,
    tp.initializers.random_normal,
]


@pytest.mark.parametrize("init", RANDOM, ids=[f.__name__ for f in RANDOM])
def test_seeded_initialisers_repeat_and_any_float_dtype_works(init: Callable[..., tp.Tensor]) -> None:
    a = init((40, 30), dtype="float64", seed=11)
    assert a.dtype == "float64"
    assert a.shape == (40, 30)
    np.testing.assert_array_equal(a.numpy(), init((40, 30), dtype="float64", seed=11).numpy())
    assert not np.array_equal(a.numpy(), init((40, 30), dtype="float64", seed=12).numpy())
    assert not np.array_equal(init((40, 30)).numpy(), init((40, 30)).numpy())  # seed=None: fresh values
    assert init((3, 3, 4, 8), seed=0).dtype == "float32"


@pytest.mark.parametrize("init", [f for f in RANDOM if f.__module__ == "tensorplug.initializers"])
def test_integer_dtypes_are_refused(init: Callable[..., tp.Tensor]) -> None:
    with pytest.raises(tp.DTypeError, match=r"initializers\.\w+: dtype must be a float dtype"):
        init((2, 2), dtype="int32")


def test_truncated_normal_redraws_are_not_another_seeds_draws() -> None:
    # seed 5's redraws come from seeds derived from (5, round), not from seed 6's stream at the same positions
    a = tp.initializers.truncated_normal((4000,), seed=5).numpy()
    first = tp.random_normal((4000,), seed=5).numpy()
    redrawn = a != first
    assert 100 < redrawn.sum() < 300  # ~4.6 % of 4000
    assert not (a == tp.random_normal((4000,), seed=6).numpy())[redrawn].any()


def test_constants() -> None:
    assert tp.initializers.zeros((2, 3)).tolist() == [[0.0] * 3] * 2
    assert tp.initializers.ones((2,), dtype="float64").dtype == "float64"
    c = tp.initializers.constant((2, 2), 0.1)
    assert c.dtype == "float32"
    assert np.allclose(c.numpy(), 0.1)
    assert tp.initializers.constant((3,), 7, dtype="int32").tolist() == [7, 7, 7]


def test_bad_arguments_say_what_to_do() -> None:
    with pytest.raises(tp.InvalidArgumentError, match=r"has fan_in 0"):
        tp.initializers.he_normal((0, 10))
    with pytest.raises(tp.InvalidArgumentError, match=r"mode must be 'fan_in', 'fan_out' or 'fan_avg'"):
        tp.initializers.he_normal((3, 3), mode="fan_sideways")  # type: ignore[arg-type]
    with pytest.raises(tp.InvalidArgumentError, match=r"distribution must be"):
        tp.initializers.variance_scaling((3, 3), distribution="cauchy")  # type: ignore[arg-type]
    with pytest.raises(tp.InvalidArgumentError, match=r"scale must be a positive finite number"):
        tp.initializers.variance_scaling((3, 3), scale=-1.0)


def test_initialised_variables_train_without_recording_the_initialisation() -> None:
    w = tp.variable(tp.initializers.glorot_uniform((4, 3), seed=0), name="w_init_test")
    x = tp.ones((2, 4))
    _value, grads = tp.variable_grads(lambda: tp.sum(tp.matmul(x, w)), [w])
    assert grads["w_init_test"].shape == (4, 3)


def test_docs_python_blocks_run(capsys: pytest.CaptureFixture[str]) -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert len(blocks) >= 2
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    assert "(144, 288)" in capsys.readouterr().out
