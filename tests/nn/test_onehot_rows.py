"""A one-hot first layer as a sum of rows: the same numbers as the layer itself, from the ones' positions."""

from __future__ import annotations

import numpy as np
import pytest

from puzzlezero import make
from puzzlezero.nn import onehot_rows
from puzzlezero.nn.onehot_rows import OneHotRows, positions, sum_rows
from puzzlezero.puzzles import inputs


def test_positions_are_each_elements_offset_plus_its_value() -> None:
    states = np.array([[2, 0, 1], [0, 0, 0]], np.uint8)
    assert positions(states, 3).tolist() == [[2, 3, 7], [0, 3, 6]]
    assert positions(np.zeros((0, 4), np.uint8), 5).shape == (0, 4)


def test_positions_mark_the_ones_of_the_puzzles_own_one_hot() -> None:
    p = make("puzzle24")
    states = p.scramble(np.random.default_rng(1), 50, (0, 100))
    onehot = p.encode(states)
    values = inputs.onehot_values(p)
    assert values == 25
    where = positions(states, values)
    assert np.array_equal(np.sort(np.flatnonzero(onehot[7])), np.sort(where[7]))
    assert (onehot.sum(1) == where.shape[1]).all()


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("n", [0, 1, 255, 700])
def test_the_sum_of_rows_is_the_linear_layer_of_the_one_hot(threads: int, n: int, monkeypatch) -> None:
    monkeypatch.setattr(onehot_rows, "_MIN_ROWS_PER_THREAD", 100)  # split small batches too
    rng = np.random.default_rng(n)
    elements, values, width = 9, 5, 17
    rows = rng.normal(size=(elements * values, width)).astype(np.float32)
    bias = rng.normal(size=width).astype(np.float32)
    states = rng.integers(0, values, size=(n, elements))
    onehot = np.zeros((n, elements * values), np.float32)
    onehot[np.arange(n)[:, None], positions(states, values)] = 1.0
    got = sum_rows(rows, bias, positions(states, values), threads)
    assert got.shape == (n, width) and got.dtype == np.float32
    np.testing.assert_allclose(got, onehot @ rows + bias, rtol=1e-5, atol=1e-5)
    layer = OneHotRows(rows, bias, values)
    np.testing.assert_allclose(layer(onehot, threads), got, rtol=1e-5, atol=1e-5)  # the one-hot itself


@pytest.mark.parametrize("threads", [1, 2])
def test_int16_rows_sum_to_the_layer_within_half_a_step_a_term(threads: int, monkeypatch) -> None:
    monkeypatch.setattr(onehot_rows, "_MIN_ROWS_PER_THREAD", 100)
    rng = np.random.default_rng(7)
    elements, values, width, n = 49, 49, 33, 400
    rows = rng.normal(size=(elements * values, width)).astype(np.float32)
    rows[:, 5] = 0.0  # a unit with no weights: scale 1, every output its bias
    rows[:, 6] *= 1e-6  # a unit of tiny weights keeps their precision
    bias = rng.normal(size=width).astype(np.float32)
    bias[6] = 0.0  # its sums alone, not lost beside a bias of float32's ulps
    layer = OneHotRows(rows, bias, values)
    small = layer.quantized()
    assert small.rows.dtype == np.int16 and small.scale is not None and small.quantized() is small
    top = np.abs(small.rows).max(axis=0)
    assert top[[0, 6]].tolist() == [32767, 32767]  # each column's largest magnitude maps to 32,767
    states = rng.integers(0, values, size=(n, elements))
    want = layer(positions(states, values))
    got = small(positions(states, values), threads)
    assert got.dtype == np.float32
    step = small.scale  # a row moves by at most half its unit's step; a sum of E rows by E / 2 steps
    assert (np.abs(got - want) <= elements / 2 * step + 1e-5).all()
    assert np.abs(got - want).max() < 1e-3 * np.abs(rows).max()  # a thousandth of the largest weight
    np.testing.assert_array_equal(got[:, 5], np.broadcast_to(bias[5], n))
    assert np.abs(got[:, 6] - want[:, 6]).max() < 1e-8  # steps of its own scale, not of the others'
    onehot = np.zeros((n, elements * values), np.float32)
    onehot[np.arange(n)[:, None], positions(states, values)] = 1.0
    np.testing.assert_allclose(small(onehot), got, rtol=1e-5, atol=1e-5)  # multiplied out: the same


def test_int16_sums_are_exact_integers_before_the_scale() -> None:
    rows = np.full((4, 3), 2.0, np.float32)
    rows[:, 1] = [32767.0, -32767.0, 32767.0, 1.0]
    small = OneHotRows(rows, np.zeros(3, np.float32), 2).quantized()
    assert small.scale is not None
    got = sum_rows(small.rows, np.zeros(3, np.float32), np.array([[0, 2], [1, 3]]), 1, small.scale)
    np.testing.assert_array_equal(got[:, 1], [65534.0, -32766.0])  # scale 1: the int32 sums themselves
    np.testing.assert_allclose(got, [[4.0, 65534.0, 4.0], [4.0, -32766.0, 4.0]], rtol=1e-6, atol=0)


def test_a_position_outside_the_rows_is_refused() -> None:
    rows, bias = np.zeros((6, 2), np.float32), np.zeros(2, np.float32)
    with pytest.raises(IndexError, match="outside 0..5"):
        sum_rows(rows, bias, np.array([[0, 6]]))
    with pytest.raises(IndexError):
        sum_rows(rows, bias, np.array([[-1, 2]]))
