"""The node table of a batched search: every generated state of every instance, once.

Nodes live in flat NumPy arrays (struct of arrays):

* ``rows     uint8[n, R]``  the state as raw bytes (``R = prod(state_shape) * itemsize``)
* ``key      uint64[n]``    the puzzle's ``hash64`` mixed with the instance id
* ``inst     int32[n]``     which search instance the node belongs to
* ``parent   int64[n]``     parent node index (``-1`` for a root)
* ``action   int16[n]``     action taken from the parent
* ``g        float32[n]``   best path cost found so far
* ``h        float32[n]``   heuristic value (computed once, when the node is created)
* ``closed_g float32[n]``   path cost at which the node was last expanded (``inf``: never; CLOSED)

An open-addressing index (linear probing, load <= 1/2, numba) maps ``(instance, state)`` to its
node. A slot is one ``uint64``: a 32-bit fingerprint of the key and ``node + 1`` (0 = empty), so a
probe reads one word until the fingerprints match; only then are the stored instance and the
**exact state bytes** compared, so a hash collision can never merge two different states (no wrong
solutions). The table is DeepCubeA's "closed dictionary": every generated state with its best ``g``.

Memory: about ``R + 40`` bytes per node plus 16-32 bytes of index. Node arrays are allocated with
``np.empty`` for the expected size, so pages are only committed as nodes are written.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["NodeTable", "NEW", "IMPROVED", "DUPLICATE", "table_bytes"]

#: codes returned by :meth:`NodeTable.add`
DUPLICATE, NEW, IMPROVED = 0, 1, 2

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_LOW32 = np.uint64(0xFFFFFFFF)
_MAX_NODES = (1 << 32) - 2


@nb.njit(cache=True, inline="always")
def _mix(key: np.uint64) -> np.uint64:
    """splitmix64 finaliser: spreads a key over all bits (top bits: slot, low 32: fingerprint)."""
    z = key
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True, inline="always")
def _shift(size: int) -> np.uint64:
    """``64 - log2(size)`` for a power-of-two table size: a slot is the top bits of the mixed key."""
    bits = 0
    while (1 << bits) < size:
        bits += 1
    return np.uint64(64 - bits)


@nb.njit(cache=True, nogil=True)
def _same_row(rows: np.ndarray, j: int, cand: np.ndarray, i: int) -> bool:
    for b in range(rows.shape[1]):
        if rows[j, b] != cand[i, b]:
            return False
    return True


@nb.njit(cache=True, nogil=True)
def _add_kernel(
    slots,
    rows,
    key,
    inst,
    parent,
    action,
    g,
    n_nodes,
    c_key,
    c_rows,
    c_inst,
    c_parent,
    c_action,
    c_g,
    out_code,
    out_idx,
):
    """Insert candidates in order; a later copy of a state sees the earlier one (in-batch dedupe).

    For each candidate: absent -> new node (code NEW); present with a larger ``g`` -> the node
    takes the candidate's ``g``, parent and action (code IMPROVED: the paper's reopening rule);
    otherwise code DUPLICATE. ``out_idx`` is the node index in every case. Returns the node count.
    """
    mask = np.uint64(slots.shape[0] - 1)
    shift = _shift(slots.shape[0])
    width = rows.shape[1]
    n = n_nodes
    for i in range(c_key.shape[0]):
        m = _mix(c_key[i])
        fp = m & _LOW32
        pos = m >> shift
        while True:
            s = slots[pos]
            if s == 0:
                slots[pos] = (fp << np.uint64(32)) | np.uint64(n + 1)
                for b in range(width):
                    rows[n, b] = c_rows[i, b]
                key[n] = c_key[i]
                inst[n] = c_inst[i]
                parent[n] = c_parent[i]
                action[n] = c_action[i]
                g[n] = c_g[i]
                out_code[i] = NEW
                out_idx[i] = n
                n += 1
                break
            if (s >> np.uint64(32)) == fp:
                j = np.int64(s & _LOW32) - 1
                if inst[j] == c_inst[i] and _same_row(rows, j, c_rows, i):
                    out_idx[i] = j
                    if c_g[i] < g[j]:
                        g[j] = c_g[i]
                        parent[j] = c_parent[i]
                        action[j] = c_action[i]
                        out_code[i] = IMPROVED
                    else:
                        out_code[i] = DUPLICATE
                    break
            pos = (pos + np.uint64(1)) & mask
    return n


@nb.njit(cache=True, nogil=True)
def _index_kernel(slots, key, n_nodes):
    """Enter nodes ``0..n_nodes-1`` into an empty index (after it grew)."""
    mask = np.uint64(slots.shape[0] - 1)
    shift = _shift(slots.shape[0])
    for j in range(n_nodes):
        m = _mix(key[j])
        pos = m >> shift
        while slots[pos] != 0:
            pos = (pos + np.uint64(1)) & mask
        slots[pos] = ((m & _LOW32) << np.uint64(32)) | np.uint64(j + 1)


class NodeTable:
    """Nodes of all instances of one search call (see the module docstring for the arrays).

    ``state_shape``/``dtype`` describe one state; ``capacity`` is the expected number of nodes
    (arrays grow by doubling beyond it; the index starts smaller and grows fourfold).
    """

    _ARRAYS = ("rows", "key", "inst", "parent", "action", "g", "h", "closed_g")

    def __init__(self, state_shape: tuple[int, ...], dtype: np.dtype, capacity: int = 1 << 14) -> None:
        self.state_shape = tuple(state_shape)
        self.dtype = np.dtype(dtype)
        self.row_bytes = int(np.prod(self.state_shape, dtype=np.int64)) * self.dtype.itemsize
        self.n = 0
        cap = min(max(int(capacity), 16), _MAX_NODES)
        self.rows = np.empty((cap, self.row_bytes), np.uint8)
        self.key = np.empty(cap, np.uint64)
        self.inst = np.empty(cap, np.int32)
        self.parent = np.empty(cap, np.int64)
        self.action = np.empty(cap, np.int16)
        self.g = np.empty(cap, np.float32)
        self.h = np.empty(cap, np.float32)
        self.closed_g = np.empty(cap, np.float32)
        self.slots = np.zeros(_pow2(2 * min(cap, 1 << 18)), np.uint64)

    # ---- conversions -------------------------------------------------------------------------
    def as_rows(self, states: np.ndarray) -> np.ndarray:
        """``states[M, *state_shape]`` -> contiguous ``uint8[M, R]`` byte rows (a view when possible)."""
        flat = np.ascontiguousarray(states, dtype=self.dtype).reshape(states.shape[0], -1)
        return flat.view(np.uint8).reshape(flat.shape[0], self.row_bytes)

    def states(self, idx: np.ndarray) -> np.ndarray:
        """The states of nodes ``idx`` as ``[len(idx), *state_shape]`` of the puzzle's dtype."""
        return self.rows[idx].view(self.dtype).reshape(len(idx), *self.state_shape)

    @staticmethod
    def mix_instance(hashes: np.ndarray, inst: np.ndarray) -> np.ndarray:
        """Combine the puzzle's ``uint64`` state hashes with instance ids into table keys."""
        with np.errstate(over="ignore"):
            return hashes.astype(np.uint64, copy=False) ^ ((inst.astype(np.uint64) + np.uint64(1)) * _GOLDEN)

    # ---- growth ------------------------------------------------------------------------------
    def reserve(self, extra: int) -> None:
        """Make room for ``extra`` more nodes (arrays doubled; index rebuilt 4x larger at load 1/2)."""
        need = self.n + int(extra)
        if need > _MAX_NODES:
            raise MemoryError(f"a search table holds at most {_MAX_NODES:,} nodes")
        cap = self.rows.shape[0]
        if need > cap:
            new_cap = min(max(need, 2 * cap), _MAX_NODES)
            for name in self._ARRAYS:
                old = getattr(self, name)
                arr = np.empty((new_cap, *old.shape[1:]), old.dtype)
                arr[: self.n] = old[: self.n]
                setattr(self, name, arr)
        if 2 * need > self.slots.shape[0]:
            self.slots = np.zeros(_pow2(8 * need), np.uint64)
            _index_kernel(self.slots, self.key, self.n)

    # ---- insertion ---------------------------------------------------------------------------
    def add(
        self,
        keys: np.ndarray,
        rows: np.ndarray,
        inst: np.ndarray,
        parent: np.ndarray,
        action: np.ndarray,
        g: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Insert ``M`` candidate nodes (``keys`` from :meth:`mix_instance`, byte ``rows[M, R]``).

        Returns ``(code int8[M], idx int64[M])`` with codes :data:`NEW`, :data:`IMPROVED` (an
        existing node got a strictly lower ``g``: reopened) or :data:`DUPLICATE`. New nodes get
        ``h = nan`` and ``closed_g = inf``; the caller fills ``h``.
        """
        m = keys.shape[0]
        self.reserve(m)
        code = np.empty(m, np.int8)
        idx = np.empty(m, np.int64)
        n0 = self.n
        self.n = _add_kernel(
            self.slots,
            self.rows,
            self.key,
            self.inst,
            self.parent,
            self.action,
            self.g,
            n0,
            keys.astype(np.uint64, copy=False),
            rows,
            inst.astype(np.int32, copy=False),
            parent.astype(np.int64, copy=False),
            action.astype(np.int16, copy=False),
            g.astype(np.float32, copy=False),
            code,
            idx,
        )
        self.h[n0 : self.n] = np.nan
        self.closed_g[n0 : self.n] = np.inf
        return code, idx

    def path(self, node: int) -> tuple[list[int], np.ndarray]:
        """Actions from the root to ``node`` and the node indices along it (root first).

        Parent pointers always point to a node of strictly smaller ``g``, so this terminates.
        """
        nodes = [node]
        while self.parent[nodes[-1]] >= 0:
            nodes.append(int(self.parent[nodes[-1]]))
        nodes.reverse()
        actions = [int(self.action[j]) for j in nodes[1:]]
        return actions, np.asarray(nodes, dtype=np.int64)


#: bytes of a node in the node arrays beyond its state's bytes (key, inst, parent, action, g, h, closed_g)
NODE_BYTES = 8 + 4 + 8 + 2 + 4 + 4 + 4


def table_bytes(row_bytes: int, nodes: int, capacity: int | None = None) -> int:
    """Peak bytes of a :class:`NodeTable` that fills ``nodes`` nodes of ``row_bytes`` bytes a few
    at a time from ``capacity`` (the constructor's; ``None``: ``nodes``), as
    :meth:`NodeTable.reserve` grows it: the node arrays as far as they are written (pages of
    ``np.empty`` are committed only then), twice a full array's nodes while it is copied into one
    of double the size; and the index, its old and new slots while it grows eightfold (8 to 16
    slots a node after the last growth, every page of them written by the rebuild)."""
    nodes = max(int(nodes), 1)
    start = cap = min(max(int(nodes if capacity is None else capacity), 16), _MAX_NODES)
    arrays = min(nodes, cap)
    while cap < nodes and cap < _MAX_NODES:
        arrays, cap = max(nodes, 2 * cap), min(2 * cap, _MAX_NODES)
    slots = peak_slots = _pow2(2 * min(start, 1 << 18))
    while 2 * nodes > slots:
        new = _pow2(8 * (slots // 2 + 1))
        peak_slots, slots = max(peak_slots, slots + new), new
    return arrays * (row_bytes + NODE_BYTES) + 8 * peak_slots


def _pow2(n: int) -> int:
    return 1 << max(4, int(n - 1).bit_length())
