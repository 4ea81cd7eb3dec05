"""Bit, atomic and prefetch primitives for numba kernels that numba does not offer on the CPU:
population count, count of trailing zeros, atomic fetch-or and fetch-add on an array element and
a cache prefetch (LLVM's ``ctpop``, ``cttz``, ``atomicrmw`` and ``prefetch``), for the
multi-threaded pattern-database builds.

``atomic_or(a, i, v)`` is the only safe way for several threads to set bits in the same word: a
plain ``a[i] |= v`` can lose another thread's bits between its read and its write. The atomics use
relaxed ordering: callers synchronise by joining their threads.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["atomic_add", "atomic_or", "popcount", "prefetch", "trailing_zeros"]


@intrinsic
def popcount(typingctx, x):  # noqa: ANN001, ANN201, ARG001
    """Number of set bits of the integer ``x``."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):  # noqa: ANN001, ANN202, ARG001
        return builder.ctpop(args[0])

    return x(x), codegen


@intrinsic
def trailing_zeros(typingctx, x):  # noqa: ANN001, ANN201, ARG001
    """Index of the lowest set bit of the integer ``x`` (undefined for ``x == 0``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):  # noqa: ANN001, ANN202, ARG001
        return builder.cttz(args[0], cgutils.true_bit)

    return x(x), codegen


def _element_pointer(context, builder, arr_t, array, index):  # noqa: ANN001, ANN202
    arr = context.make_array(arr_t)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, arr_t, arr, [index], wraparound=False)


def _is_int_vector(array, index) -> bool:  # noqa: ANN001
    return (
        isinstance(array, types.Array)
        and array.ndim == 1
        and isinstance(array.dtype, types.Integer)
        and isinstance(index, types.Integer)
    )


def _atomic_rmw(op: str, array, index, value):  # noqa: ANN001, ANN202
    """Signature and code of ``old = array[index]; array[index] = old <op> value``, atomically."""
    if not (_is_int_vector(array, index) and isinstance(value, types.Integer)):
        return None

    def codegen(context, builder, sig, args):  # noqa: ANN001, ANN202
        arr_t, _, val_t = sig.args
        ptr = _element_pointer(context, builder, arr_t, args[0], args[1])
        val = context.cast(builder, args[2], val_t, arr_t.dtype)
        return builder.atomic_rmw(op, ptr, val, "monotonic")

    return array.dtype(array, index, value), codegen


@intrinsic
def atomic_or(typingctx, array, index, value):  # noqa: ANN001, ANN201, ARG001
    """``old = array[index]; array[index] |= value`` as one atomic step; returns ``old``.
    ``array`` is a 1-D integer array and ``index`` is not checked."""
    return _atomic_rmw("or", array, index, value)


@intrinsic
def atomic_add(typingctx, array, index, value):  # noqa: ANN001, ANN201, ARG001
    """``old = array[index]; array[index] += value`` as one atomic step; returns ``old``.
    ``array`` is a 1-D integer array and ``index`` is not checked."""
    return _atomic_rmw("add", array, index, value)


@intrinsic
def prefetch(typingctx, array, index):  # noqa: ANN001, ANN201, ARG001
    """Hint that ``array[index]`` will be read soon (LLVM ``prefetch``: its cache line is fetched
    while other work goes on); no effect on results, ``index`` is not checked."""
    if not _is_int_vector(array, index):
        return None

    def codegen(context, builder, sig, args):  # noqa: ANN001, ANN202
        ptr = _element_pointer(context, builder, sig.args[0], args[0], args[1])
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0i8"
        )
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])  # read, keep, data
        return context.get_dummy_value()

    return types.none(array, index), codegen
