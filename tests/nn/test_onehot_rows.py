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
    where = positions(states, inputs.onehot_values(p))
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


def test_a_position_outside_the_rows_is_refused() -> None:
    rows, bias = np.zeros((6, 2), np.float32), np.zeros(2, np.float32)
    with pytest.raises(IndexError, match="outside 0..5"):
        sum_rows(rows, bias, np.array([[0, 6]]))
    with pytest.raises(IndexError):
        sum_rows(rows, bias, np.array([[-1, 2]]))
