"""A one-hot first layer computed as a sum of rows, without torch.

A plain one-hot input (``E`` state elements, each one of ``V`` values, value index fastest) has
``E`` ones among its ``E V`` numbers, so the first linear layer's output is its bias plus ``E`` rows
of its (transposed) weight: those at the ones' positions ``e V + state[e]``. Where ``V`` is large
that layer is most of the network (the 48-puzzle's is 2,401 x 1,000 of its 3.9M weights), and
adding ``E`` rows is far less work than multiplying an ``E V``-wide input, in float32 or in int8;
nor is the one-hot itself written (``4 E V`` bytes a state) and read again.

Those ``E`` rows are read from memory for every state (196 KB a 48-puzzle state in float32), and
that reading, not the adding, bounds the layer. :meth:`OneHotRows.quantized` stores them as
``int16`` with one scale per output unit (half the bytes; the sums exact in ``int32``; an output
moves by at most ``E / 65,534`` of its unit's largest weight, 0.075% on the 48-puzzle), which an
int8 network uses: its other layers are quantized far more coarsely (:mod:`puzzlezero.nn.runtime`).
On a 2-vCPU Xeon the 48-puzzle's layer sums 1.6x as many states a second so.

:func:`positions` turns states into those positions, :func:`sum_rows` adds the rows up (a numba
loop, state by state, so that one state's sum stays in the CPU's first cache; the batch is split
over ``threads`` Python threads, the loop releasing the GIL). :func:`sums_rows` says where it pays:
a network (:func:`puzzlezero.nn.runtime.load_network`) and a torch inference copy
(:func:`puzzlezero.nn.fast.inference_copy`) read their input this way from that many values up.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache

import numpy as np

from puzzlezero.nn.config import NetConfig

__all__ = ["MIN_VALUES", "OneHotRows", "positions", "sum_rows", "sums_rows"]

#: the fewest values per state element at which the first layer is a sum of rows. Measured with
#: torch on a 2-core Xeon (int8 elsewhere, one thread): the whole network 1.39x faster on puzzle48
#: (``V`` 49), 1.15x on puzzle35 (36), 1.13x on puzzle24 (25), 1.03x on puzzle15 (16), and 1.8x
#: slower on cube3's first layer (``V`` 6)
MIN_VALUES = 20
#: the fewest states a thread of :func:`sum_rows` is given
_MIN_ROWS_PER_THREAD = 256
#: the largest ``int16``: a quantized column's largest magnitude
_INT16_MAX = 32767
#: the most elements whose ``int16`` rows an ``int32`` sum holds without overflow (2**31 / 2**15)
_MAX_INT16_TERMS = 65536
_pools: dict[int, ThreadPoolExecutor] = {}


@dataclass(frozen=True, eq=False)
class OneHotRows:
    """A first linear layer over a one-hot of ``values`` values: ``rows`` ``float32[E V, H]`` (the
    weight transposed, its batch norm folded in) and ``bias`` ``float32[H]``."""

    rows: np.ndarray
    bias: np.ndarray
    values: int
    #: ``float32[H]`` when ``rows`` are ``int16`` (:meth:`quantized`): a row's true value is
    #: ``rows * scale``; ``None`` for ``float32`` rows
    scale: np.ndarray | None = None

    def __call__(self, x: np.ndarray, threads: int = 1) -> np.ndarray:
        """The layer's output ``float32[B, H]`` for :func:`positions` ``x`` (integers ``[B, E]``), or
        for any float input ``[B, E V]`` (then multiplied out: a one-hot or not, the same layer)."""
        if np.issubdtype(x.dtype, np.integer):
            return sum_rows(self.rows, self.bias, x, threads, self.scale)
        rows = self.rows if self.scale is None else self.rows.astype(np.float32) * self.scale
        return np.asarray(x, np.float32) @ rows + self.bias

    def quantized(self) -> OneHotRows:
        """The same layer with ``int16`` rows, one scale per output unit (the largest magnitude of
        its column maps to 32,767): half the bytes a state reads; each output moves by at most
        ``E / 2`` of its unit's scale. Quantized already: itself."""
        if self.scale is not None:
            return self
        top = np.abs(self.rows).max(axis=0)
        scale = np.where(top > 0, top / _INT16_MAX, 1.0).astype(np.float32)
        rows = np.rint(self.rows / scale).astype(np.int16)
        return OneHotRows(np.ascontiguousarray(rows), self.bias, self.values, scale)


def sums_rows(config: NetConfig, onehot_values: int | None) -> bool:
    """Whether a network of ``config`` computes its first layer as a sum of rows, given its puzzle's
    ``onehot_values`` (``None``: the puzzle's one-hot is not a plain one): a fully connected network
    reading that one-hot of one state, from :data:`MIN_VALUES` values up."""
    values = onehot_values or 0
    return (
        values >= MIN_VALUES
        and config.arch == "mlp"
        and config.encoding == "onehot"
        and config.history == 1
        and config.input_dim % values == 0
    )


def positions(states: np.ndarray, values: int) -> np.ndarray:
    """Where the ones of the plain one-hot of ``states[B, ...]`` (``values`` values an element)
    are: ``int32[B, E]``, element ``e`` of state ``b`` at ``e * values + states[b, e]``."""
    states = np.asarray(states)
    flat = states.reshape(states.shape[0], int(np.prod(states.shape[1:])))
    return flat.astype(np.int32) + np.arange(flat.shape[1], dtype=np.int32) * np.int32(values)


def sum_rows(
    rows: np.ndarray,
    bias: np.ndarray,
    index: np.ndarray,
    threads: int = 1,
    scale: np.ndarray | None = None,
) -> np.ndarray:
    """``bias + rows[index[b]].sum(0)`` for every ``b``: ``float32[B, H]``, on up to ``threads``
    threads; with ``scale`` (``int16`` rows, :meth:`OneHotRows.quantized`), ``bias + scale *
    rows[index[b]].sum(0)``, the sum taken in ``int32``. An index outside ``rows`` raises
    ``IndexError``."""
    index = np.ascontiguousarray(index, dtype=np.int32)
    if index.size and (index.min() < 0 or index.max() >= rows.shape[0]):
        raise IndexError(f"a one-hot position outside 0..{rows.shape[0] - 1}")
    if scale is not None and index.shape[1] > _MAX_INT16_TERMS:
        raise ValueError(f"int16 rows sum at most {_MAX_INT16_TERMS} elements, not {index.shape[1]}")
    out = np.empty((index.shape[0], rows.shape[1]), np.float32)
    parts = max(1, min(int(threads), index.shape[0] // _MIN_ROWS_PER_THREAD))
    weights: tuple[np.ndarray, ...]
    if scale is None:
        kernel, weights = _kernel(), (rows, bias)
    else:
        kernel, weights = _int16_kernel(), (rows, scale, bias)
    if parts == 1:
        kernel(*weights, index, out)
        return out
    bounds = np.linspace(0, index.shape[0], parts + 1).astype(int)
    pool = _pools.get(parts)
    if pool is None:
        pool = _pools.setdefault(parts, ThreadPoolExecutor(parts, thread_name_prefix="onehot-rows"))
    done = [
        pool.submit(kernel, *weights, index[lo:hi], out[lo:hi])
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
    ]
    for d in done:
        d.result()
    return out


@cache
def _kernel() -> Callable[..., None]:
    """The compiled loop (numba is imported on first use: a process that never sums rows, such as
    a cube's solve, does not pay for its import)."""
    import numba as nb

    @nb.njit(cache=True, nogil=True)
    def sum_rows_into(rows: np.ndarray, bias: np.ndarray, index: np.ndarray, out: np.ndarray) -> None:
        n, e = index.shape
        h = rows.shape[1]
        for b in range(n):
            for k in range(h):
                out[b, k] = bias[k]
            for j in range(e):
                r = index[b, j]
                for k in range(h):
                    out[b, k] += rows[r, k]

    return sum_rows_into


@cache
def _int16_kernel() -> Callable[..., None]:
    """The loop over ``int16`` rows: each state's sum in an ``int32`` row, then scaled."""
    import numba as nb

    @nb.njit(cache=True, nogil=True)
    def sum_int16_rows_into(
        rows: np.ndarray, scale: np.ndarray, bias: np.ndarray, index: np.ndarray, out: np.ndarray
    ) -> None:
        n, e = index.shape
        h = rows.shape[1]
        acc = np.empty(h, np.int32)
        for b in range(n):
            for k in range(h):
                acc[k] = 0
            for j in range(e):
                r = index[b, j]
                for k in range(h):
                    acc[k] += rows[r, k]
            for k in range(h):
                out[b, k] = bias[k] + scale[k] * acc[k]

    return sum_int16_rows_into
