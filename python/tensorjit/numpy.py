"""numpy's names for tensorjit's kernels: take, take_along_axis,
put_along_axis, and add_at, subtract_at, multiply_at, maximum_at and
minimum_at (np.add.at and its kin), with numpy's argument order and
semantics. Each is a thin mapping onto one op of the library (Gather,
GatherElements, ScatterElementsUpdate, ScatterNDUpdate); the kernels are
those of tensorjit's families, so a new array length compiles nothing.

Indices follow numpy: negative ones count from the end, any other out of
range raises tensorjit.IndexOutOfRange (an IndexError) and writes nothing.
Where numpy raises another class for bad input, the error is a tensorjit.Error
that is also numpy's class: an axis out of bounds numpy's AxisError, indices
that are not integers (take_along_axis, put_along_axis, the *_at) or index
arrays that do not broadcast an IndexError. The *_at give numpy's ufunc.at's
bits; the calls where the library's would differ are served by numpy's own
ufunc.at (_at's docstring, python/README.md).

An ndarray subclass (np.ma.MaskedArray, np.matrix, np.memmap, a class of your
own) and an object that overrides numpy's functions (__array_function__; for
the *_at, __array_ufunc__) are handed to numpy's own function: their class
decides what the call means for them (a mask, a matrix's rank, attributes its
results carry), which a kernel over the raw elements would drop. np.asarray()
of one runs the kernels on its elements.
"""

from __future__ import annotations

import math
import operator
import re
import struct
import warnings
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _tensorjit as _tj

__all__ = ["take", "take_along_axis", "put_along_axis", "add_at", "subtract_at", "multiply_at",
           "maximum_at", "minimum_at"]

_MODES = {"raise": "negative-wraps", "clip": "clamp"}
# numpy 2 reads a Python scalar by its type (NEP 50), where numpy 1 read it
# by its value; 2.5 changed take's rule for out= (numpy issue 25588)
_NUMPY_VERSION = tuple(int(p) for p in re.findall(r"\d+", np.__version__)[:2])
_NUMPY2 = _NUMPY_VERSION >= (2, 0)

# Index arrays every op here takes as they are (native int32 and int64):
# the fast paths below serve only these, the general ones convert the rest
_INDEX_DTYPES = frozenset({np.dtype(np.int32), np.dtype(np.int64)})
# dtype -> (min, max) of an integer dtype, filled as the *_at meet them
_INT_RANGES: dict = {}
# values the fast paths read as the general ones do (np.asarray of them)
_PLAIN_VALUES = (np.ndarray, int, float, bool)

_NP_AXIS_ERROR = getattr(getattr(np, "exceptions", None), "AxisError", None) or np.AxisError


class _AxisError(_tj.SignatureError, _NP_AXIS_ERROR):
    """An axis out of bounds: a SignatureError (a ValueError) and numpy's
    AxisError (also an IndexError), the class numpy's callers catch."""


class _IndexTypeError(_tj.TypeMismatch, IndexError):
    """Indices that are not integers: a TypeMismatch and, as numpy raises
    for take_along_axis, put_along_axis and add.at, an IndexError."""


class _IndexShapeError(_tj.SignatureError, IndexError):
    """Index arrays that do not broadcast together: numpy's IndexError
    ("shape mismatch")."""


class _OverflowError(_tj.SignatureError, OverflowError):
    """A number past what the array's dtype (or numpy's C long) holds: a
    SignatureError, as the package's numbers past 64 bits are, and the
    OverflowError numpy raises for it."""


def _numpy_owns(*objs: Any, hook: str = "__array_function__") -> bool:
    """Whether numpy's own function must serve a call with these arguments:
    one is an ndarray subclass, or overrides numpy through hook. For
    __array_ufunc__ (the *_at) a subclass that keeps ndarray's is served here,
    as numpy's add.at then writes its elements as for an ndarray."""
    for o in objs:
        t = type(o)
        if t is np.ndarray or o is None:
            continue
        if hook == "__array_ufunc__":
            if getattr(t, hook, np.ndarray.__array_ufunc__) is not np.ndarray.__array_ufunc__:
                return True
        elif isinstance(o, np.ndarray) or getattr(t, hook, None) is not None:
            return True
    return False


def take(a: Any, indices: Any, axis: Optional[int] = None, out: Optional[np.ndarray] = None,
         mode: str = "raise") -> Any:
    """numpy.take: elements (axis=None: of a flattened) or slices along
    axis at indices. mode "raise" (the default: IndexOutOfRange beyond
    [-n, n)), "wrap" (modulo n) or "clip" (into [0, n-1], negative ones to 0,
    as numpy clips). out: of the result's shape, any layout, and it may
    overlap a or indices (as numpy's, written once the result is complete;
    untouched when the call raises); of a's dtype, or of one numpy casts to
    a's safely, the result then cast into it as numpy casts it (int16 for
    int32 data, wrapping)."""
    if isinstance(axis, bool):  # numpy's take refuses one (take_along_axis reads it as 0 or 1)
        raise _tj.TypeMismatch(f"tensorjit: axis must be an integer, not bool ({axis!r}): "
                               "numpy's take refuses one")
    if type(a) is np.ndarray and type(mode) is str and (out is None or _writable_in_place(out)):
        # the usual call as the general path below makes it, without the
        # checks that cost the smallest calls more than their kernel; a call
        # the library refuses goes on below, which raises in numpy's order
        # or copes (an out of another dtype, or overlapping)
        policy, idx = _MODES.get(mode), indices
        if mode == "wrap" and type(indices) is np.ndarray and indices.dtype in _INDEX_DTYPES:
            k = 0 if axis is None else _plain_axis(axis, a.ndim)
            n = a.size if axis is None else a.shape[k] if k >= 0 else 0
            if n:  # np.mod, as below, by the ufunc's operator
                policy, idx = "negative-wraps", indices % n
        if policy is not None:
            try:
                r = _tj.gather(a.ravel() if axis is None else a, idx, 0 if axis is None else axis,
                               index_policy=policy, out=out)
            except _tj.Error:
                pass
            else:
                return r[()] if out is None and r.ndim == 0 else r
    if _numpy_owns(a, out):
        return np.take(a, indices, axis=axis, out=out, mode=mode)
    if mode not in ("raise", "wrap", "clip"):
        raise _tj.SignatureError(f"tensorjit: mode must be 'raise', 'wrap' or 'clip', "
                                 f"not {mode!r}")
    if axis is None:
        a = np.ravel(a)
        axis = 0
    elif mode == "wrap":
        axis = _axis(axis, np.ndim(a))
    if mode == "wrap":
        indices = np.mod(indices, np.shape(a)[axis]) if np.shape(a)[axis] else indices
    policy = _MODES.get(mode, "negative-wraps")
    try:
        if isinstance(out, np.ndarray) and not (out.flags.c_contiguous and out.flags.aligned
                                                and out.dtype.isnative):
            return _take_through(a, indices, axis, policy, out)
        result = _tj.gather(a, indices, axis, index_policy=policy, out=out)
    except _tj.Error as e:
        # the axis is checked only once the call fails (the library checks
        # it too, and each check costs the smallest calls a third of their
        # time), for numpy's class and numpy's order: a bad axis first
        try:
            _axis(axis, np.ndim(a))
        except _tj.Error as bad_axis:
            raise bad_axis from None
        if isinstance(out, np.ndarray) and (str(e).startswith("tensorjit: out overlaps") or
                                            out.dtype != getattr(a, "dtype", out.dtype)):
            return _take_through(a, indices, axis, policy, out)
        raise
    if out is None and isinstance(result, np.ndarray) and result.ndim == 0:
        return result[()]  # numpy's scalar for a scalar index into a vector
    return result


def _take_through(a: Any, indices: Any, axis: int, policy: str, out: np.ndarray) -> np.ndarray:
    """take into an out numpy takes but the kernel cannot write (a strided
    view, one overlapping the input, as numpy's test_out_overlap): numpy
    buffers the result too, and out is written only once it is complete."""
    result = _tj.gather(a, indices, axis, index_policy=policy)
    if out.shape != result.shape:
        raise _tj.SignatureError(f"tensorjit: out has shape {out.shape}; the output's is "
                                 f"{result.shape}")
    # numpy's rule: its buffer is one of a's dtype, written back into out
    # whatever the cast loses; before 2.5 out's dtype must cast to the data's
    # safely; from 2.5 the data's should cast to out's under same_kind, and
    # one that does not is taken with a DeprecationWarning (numpy issue
    # 25588: an int64 out of int32 data was refused)
    if _NUMPY_VERSION >= (2, 5):
        if not np.can_cast(result.dtype, out.dtype, "same_kind"):
            warnings.warn(f"tensorjit: take's result of dtype {result.dtype} cast to out's "
                          f"{out.dtype} is not a same-kind cast (numpy 2.5 deprecates it too)",
                          DeprecationWarning, stacklevel=3)
    elif not np.can_cast(out.dtype, result.dtype, "safe"):
        raise _tj.TypeMismatch(f"tensorjit: out has dtype {out.dtype}, which does not cast "
                               f"to the data's {result.dtype} safely (numpy refuses it too)")
    try:
        out[...] = result
    except ValueError as e:  # numpy's "assignment destination is read-only"
        if out.flags.writeable:
            raise
        raise _tj.SignatureError("tensorjit: out must be writeable (it is read-only)") from e
    return out


def _int64_indices(indices: Any, where: str) -> Any:
    """Integer indices of a type the op does not take (GatherElements and
    ScatterNDUpdate take int32 and int64, as OpenVINO's specs say) as int64,
    which holds each value exactly; numpy takes any integer type. A uint64
    beyond int64 is out of range for any array: IndexOutOfRange, naming
    it, rather than a wrapped negative index."""
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu" or idx.dtype in (np.int32, np.int64):
        return indices
    top = np.iinfo(np.int64).max
    if idx.dtype == np.uint64 and idx.size and idx.max() > top:
        pos = np.unravel_index(int(np.argmax(idx > top)), idx.shape)
        raise _tj.IndexOutOfRange(f"tensorjit: indices[{','.join(map(str, pos))}] = "
                                  f"{idx[pos]} is out of range for {where}")
    return idx.astype(np.int64)


def _integer_indices(indices: Any, fn: str) -> np.ndarray:
    """indices as an integer array; other types raise numpy's class (an
    IndexError) as a TypeMismatch."""
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise _IndexTypeError(f"tensorjit: {fn} takes integer indices, not {idx.dtype} "
                              "(numpy raises IndexError for them too)")
    return idx


def _broadcast_shape(*shapes: Tuple[int, ...]) -> Tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError as e:
        raise _IndexShapeError(f"tensorjit: shape mismatch: {e}") from None


def _broadcast_except(arr: Any, indices: Any, axis: int) -> Tuple[Any, Any]:
    """arr and indices broadcast against each other in every dim but axis,
    as take_along_axis and put_along_axis do."""
    a_shape, i_shape = list(np.shape(arr)), list(np.shape(indices))
    if len(a_shape) != len(i_shape):
        raise _tj.SignatureError(f"tensorjit: indices has rank {len(i_shape)}; it must have "
                                 f"arr's, {len(a_shape)}")
    if a_shape[:axis] + a_shape[axis + 1:] == i_shape[:axis] + i_shape[axis + 1:]:
        return arr, indices
    a_shape[axis] = i_shape[axis] = 1
    shape = list(_broadcast_shape(tuple(a_shape), tuple(i_shape)))
    a_want, i_want = list(shape), list(shape)
    a_want[axis], i_want[axis] = np.shape(arr)[axis], np.shape(indices)[axis]
    return np.broadcast_to(arr, a_want), np.broadcast_to(indices, i_want)


def _axis(axis: int, ndim: int) -> int:
    try:
        axis = operator.index(axis)
    except TypeError:
        raise _tj.TypeMismatch(f"tensorjit: axis must be an integer, not "
                               f"{type(axis).__name__} ({axis!r})") from None
    if not -ndim <= axis < ndim:
        raise _AxisError(axis, ndim, "tensorjit")
    return axis + ndim if axis < 0 else axis


def _plain_axis(axis: Any, ndim: int) -> int:
    """A Python int axis in [-ndim, ndim) made non-negative; -1 for any
    other (the general path's _axis says what is wrong with it)."""
    if type(axis) is not int or not -ndim <= axis < ndim:
        return -1
    return axis + ndim if axis < 0 else axis


def _same_but(a_shape: Tuple[int, ...], i_shape: Tuple[int, ...], axis: int) -> bool:
    """Shapes of one rank that agree in every dim but axis."""
    return (len(a_shape) == len(i_shape)
            and a_shape[:axis] + a_shape[axis + 1:] == i_shape[:axis] + i_shape[axis + 1:])


def _writable_in_place(a: Any) -> bool:
    """An ndarray the kernels write in place as it is (_scatter_into's test,
    and _in_place's: writeable)."""
    if type(a) is not np.ndarray:
        return False
    f = a.flags
    return f.writeable and f.c_contiguous and f.aligned and a.dtype.isnative


def _filled(values: Any, dtype: np.dtype, shape: Tuple[int, ...]) -> Optional[np.ndarray]:
    """values as an array of dtype and shape, as np.asarray(values, dtype)
    broadcast to shape makes it (a copy where it broadcasts: the kernels
    copy a broadcast view anyway); None where that raises or values has
    more dims than shape (broadcast_to refuses them, an assignment would
    drop leading 1s), for the general path to word."""
    try:
        v = np.asarray(values, dtype=dtype)
        if v.shape == shape:
            return v
        if v.ndim > len(shape):
            return None
        u = np.empty(shape, dtype)
        u[...] = v
        return u
    except (TypeError, ValueError, OverflowError):
        return None


def take_along_axis(arr: Any, indices: Any, axis: Optional[int]) -> Any:
    """numpy.take_along_axis: out[i...] = arr[i... with its axis coordinate
    replaced by indices[i...]] (GatherElements); indices and arr broadcast
    in every dim but axis; axis=None works on the flattened arr."""
    if type(arr) is np.ndarray and type(indices) is np.ndarray and indices.dtype in _INDEX_DTYPES:
        flat = arr.ravel() if axis is None else arr
        ax = _plain_axis(0 if axis is None else axis, flat.ndim)
        if ax >= 0 and _same_but(flat.shape, indices.shape, ax):  # nothing to broadcast
            try:
                return _tj.gather_elements(flat, indices, ax, index_policy="negative-wraps")
            except _tj.Error:
                pass  # raised below, as the general path words it
    if _numpy_owns(arr, indices):
        return np.take_along_axis(arr, indices, axis)
    if axis is None:
        _one_dim_for_axis_none(indices, "take_along_axis")
        arr = np.ravel(arr)
        axis = 0
    axis = _axis(axis, np.ndim(arr))
    indices = _integer_indices(indices, "take_along_axis")
    indices = _int64_indices(indices, f"arr's axis {axis} of size {np.shape(arr)[axis]}")
    arr, indices = _broadcast_except(arr, indices, axis)
    return _tj.gather_elements(arr, indices, axis, index_policy="negative-wraps")


def _one_dim_for_axis_none(indices: Any, fn: str) -> None:
    """numpy's rule for axis=None, in numpy's words (its tests look for
    them): indices index the flattened array, so they are 1-D."""
    if np.ndim(indices) != 1:
        raise _tj.SignatureError(f"tensorjit: {fn}: when axis is None, indices must have a "
                                 f"single dimension, not {np.ndim(indices)}")


def _in_place(a: Any, name: str, fn: str) -> np.ndarray:
    """a as the numpy array a call writes into: a itself, or a view of its
    memory (a CPU tensor's); anything numpy would copy (a list, a scalar)
    is refused, since the writes would go to the copy and be lost (numpy's
    add.at refuses it too: 'first operand must be array')."""
    if isinstance(a, np.ndarray):
        arr = a
    else:
        try:
            arr = np.asarray(a)
        except (TypeError, ValueError, RuntimeError) as e:  # a tensor numpy cannot view
            raise _tj.TypeMismatch(f"tensorjit: {fn} writes into {name} in place, and numpy "
                                   f"cannot share its memory: {e}") from e
        if arr.flags.owndata:
            raise _tj.TypeMismatch(f"tensorjit: {fn} writes into {name} in place, so {name} "
                                   f"must be an array (numpy's, or one sharing its memory), "
                                   f"not {type(a).__name__}")
    if not arr.flags.writeable:
        raise _tj.SignatureError(f"tensorjit: {fn} writes into {name} in place, but {name} is "
                                 f"read-only")
    return arr


def _apart(x: np.ndarray, target: np.ndarray) -> np.ndarray:
    """x, or a copy of it where it shares target's memory: numpy reads an
    operand that overlaps what it writes as it was before the call, and the
    kernels refuse such an overlap."""
    return x.copy() if np.may_share_memory(x, target) else x


def _scatter_into(target: np.ndarray, call: Any, *reads: np.ndarray) -> None:
    """call(out, *reads) writes target's new contents: in place where the
    kernel can write target, else through a copy and numpy's assignment (a
    strided view, another byte order). A read that overlaps target, which
    the library refuses ('out overlaps'; it copies a strided one first), is
    then read through a copy of it (_apart): asked only on that refusal, so
    that the usual call pays nothing for it."""
    if not (target.flags.c_contiguous and target.flags.aligned and target.dtype.isnative):
        target[...] = call(None, *reads)
        return
    try:
        call(target, *reads)
    except _tj.SignatureError as e:
        if not str(e).startswith("tensorjit: out overlaps"):
            raise
        call(target, *(_apart(x, target) for x in reads))


def put_along_axis(arr: np.ndarray, indices: Any, values: Any, axis: Optional[int]) -> None:
    """numpy.put_along_axis, in place: arr[i... with its axis coordinate
    replaced by indices[i...]] = values[i...] (ScatterElementsUpdate). As
    numpy's, indices broadcast with arr in every dim but axis (a dim of 1 in
    indices writes along all of arr's, a dim of 1 in arr takes all of
    indices'), values to that shape; of duplicates the last in row-major
    order wins. axis=None works on the flattened arr, in C order."""
    if (_writable_in_place(arr) and type(indices) is np.ndarray
            and indices.dtype in _INDEX_DTYPES and type(values) in _PLAIN_VALUES):
        ax = _plain_axis(axis, arr.ndim)
        if ax >= 0 and _same_but(arr.shape, indices.shape, ax):  # nothing to broadcast
            v = _filled(values, arr.dtype, indices.shape)
            if v is not None:
                try:
                    _tj.scatter_elements_update(arr, indices, v, ax,
                                                index_policy="negative-wraps", out=arr)
                    return
                except _tj.Error:
                    pass  # nothing was written: the general path raises it or copes
    if _numpy_owns(arr, indices, values):
        return np.put_along_axis(arr, indices, values, axis)
    arr = _in_place(arr, "arr", "put_along_axis")
    indices = _integer_indices(indices, "put_along_axis")
    if axis is None:
        _one_dim_for_axis_none(indices, "put_along_axis")
        if arr.flags.c_contiguous:
            target = arr.reshape(-1)  # a view: the writes reach arr
        else:  # reshape would copy and the writes be lost: write the flat result back
            flat = arr.ravel()
            put_along_axis(flat, indices, values, 0)
            arr[...] = flat.reshape(arr.shape)
            return
        axis = 0
    else:
        target = arr
    axis = _axis(axis, target.ndim)
    if indices.ndim != target.ndim:
        raise _tj.SignatureError(f"tensorjit: indices has rank {indices.ndim}; it must have "
                                 f"arr's, {target.ndim}")
    i_shape = indices.shape
    if i_shape[:axis] + i_shape[axis + 1:] == target.shape[:axis] + target.shape[axis + 1:]:
        shape = i_shape  # the usual call: nothing to broadcast (and no dim to fold, below)
    else:
        a_shape, b_shape = list(target.shape), list(i_shape)
        a_shape[axis] = b_shape[axis] = 1
        shape = _broadcast_shape(tuple(a_shape), tuple(b_shape))
        shape = shape[:axis] + (i_shape[axis],) + shape[axis + 1:]
    indices = _int64_indices(indices, f"arr's axis {axis} of size {target.shape[axis]}")
    if shape is not i_shape:
        indices = np.broadcast_to(indices, shape)
    try:
        values = np.asarray(values, dtype=target.dtype)
    except (TypeError, ValueError, OverflowError) as e:  # "x" or NaN into int64, 2**70
        what = (f"tensorjit: values ({type(values).__name__}) cannot be made an array of "
                f"arr's dtype {target.dtype}: {e}")
        raise (_OverflowError(what) if isinstance(e, OverflowError) else
               _tj.TypeMismatch(what) if isinstance(e, TypeError) else
               _tj.SignatureError(what)) from e
    try:
        values = np.broadcast_to(values, shape)
    except ValueError as e:
        raise _tj.SignatureError(f"tensorjit: values of shape {values.shape} do not broadcast "
                                 f"to the indices' shape {tuple(shape)}: {e}") from None
    # a dim where arr has 1 and the broadcast more: every position along it
    # writes the same slice of arr, so it joins axis (kept in its order with
    # axis, so that of duplicates the last in numpy's row-major order wins)
    # and arr drops it (a view)
    folded = [] if shape is i_shape else [
        d for d in range(target.ndim) if d != axis and target.shape[d] == 1 and shape[d] > 1]
    if folded:
        group = sorted(folded + [axis])
        rest = [d for d in range(target.ndim) if d not in group]
        at = sum(1 for d in rest if d < axis)
        order = rest[:at] + group + rest[at:]
        new_shape = [shape[d] for d in rest[:at]] + [-1] + [shape[d] for d in rest[at:]]
        indices = indices.transpose(order).reshape(new_shape)
        values = values.transpose(order).reshape(new_shape)
        target = np.squeeze(target, axis=tuple(folded))
        axis = at
    _scatter_into(target, lambda out, i, v: _tj.scatter_elements_update(
        target, i, v, axis, index_policy="negative-wraps", out=out), indices, values)


def add_at(a: np.ndarray, indices: Union[Any, Sequence[Any]], b: Any) -> None:
    """numpy.add.at(a, indices, b), in place: for every index in turn,
    a[index] += b[...] (ScatterNDUpdate with reduction "sum": duplicates
    all add, in row-major order). indices: an integer array (positions along
    the first axis), a tuple of them (positions in the first len(tuple)
    dims, broadcast together) or () (the whole of a); b broadcasts to the
    selected shape. Slices, None, Ellipsis and boolean masks, which numpy
    also takes, are refused (TypeMismatch). The result is numpy's bit for
    bit; the calls the library's bits would differ on are numpy's own
    (_at's docstring)."""
    return _at(np.add, "sum", "add_at", a, indices, b)


def subtract_at(a: np.ndarray, indices: Union[Any, Sequence[Any]], b: Any) -> None:
    """numpy.subtract.at(a, indices, b), in place: a[index] -= b[...] for
    every index in turn (reduction "sub"); add_at's arguments. bool a and
    bool b is a TypeMismatch (a TypeError), as numpy refuses a boolean
    subtract; bool a with a number b is numpy's (it subtracts in b's type)."""
    return _at(np.subtract, "sub", "subtract_at", a, indices, b)


def multiply_at(a: np.ndarray, indices: Union[Any, Sequence[Any]], b: Any) -> None:
    """numpy.multiply.at(a, indices, b), in place: a[index] *= b[...] for
    every index in turn (reduction "prod"); add_at's arguments."""
    return _at(np.multiply, "prod", "multiply_at", a, indices, b)


def maximum_at(a: np.ndarray, indices: Union[Any, Sequence[Any]], b: Any) -> None:
    """numpy.maximum.at(a, indices, b), in place: a[index] =
    np.maximum(a[index], b[...]) for every index in turn (reduction "max":
    a NaN propagates); add_at's arguments. A float call where b holds a
    zero that could tie with a zero of the other sign goes to numpy (_at)."""
    return _at(np.maximum, "max", "maximum_at", a, indices, b)


def minimum_at(a: np.ndarray, indices: Union[Any, Sequence[Any]], b: Any) -> None:
    """numpy.minimum.at(a, indices, b), in place: a[index] =
    np.minimum(a[index], b[...]) for every index in turn (reduction "min");
    maximum_at's rules."""
    return _at(np.minimum, "min", "minimum_at", a, indices, b)


def _numpy_at(ufunc: np.ufunc, a: Any, indices: Any, b: Any) -> None:
    """numpy's own ufunc.at: every call _at hands to numpy goes through
    here (the tests count them)."""
    return ufunc.at(a, indices, b)


def _rectangular(x: Any, fn: str, what: str) -> np.ndarray:
    """np.asarray(x), a ragged x (numpy's ValueError, "inhomogeneous shape")
    a SignatureError naming fn's argument what."""
    try:
        return np.asarray(x)
    except ValueError as e:
        raise _tj.SignatureError(f"tensorjit: {fn}'s {what} is not a rectangular array: "
                                 f"{e}") from e


def _at(ufunc: np.ufunc, reduction: str, fn: str, a: Any, indices: Any, b: Any) -> None:
    """ufunc.at(a, indices, b) on ScatterNDUpdate with reduction, whose
    result must be numpy's bit for bit. Where the library's would differ
    (measured against numpy 1.24; python/README.md), numpy's ufunc.at serves
    the call, once the indices are checked (so that a bad one still writes
    nothing):
    - b whose type numpy promotes a's to another (np.result_type(a, b) is not
      a's dtype: f64 b for f32 a, 200 for int8 a): numpy computes in that
      type and casts back. Integer a with integer b for add, subtract and
      multiply stays here (b wrapped to a's type gives the same bits);
    - maximum and minimum of floats where b holds a zero that may meet a zero
      of the other sign (zeros of both signs in b, or in a's selected
      elements one of the other sign): numpy keeps the later of a tie of
      signed zeros, the library the earlier;
    - float16 with a NaN in b or in a's selected elements: the library
      computes f16 in f32 and rounds back, which drops a NaN's payload."""
    if _tj._at_plain(a, indices, b, reduction) or _at_fast(ufunc, reduction, a, indices, b):
        return None
    if _numpy_owns(a, b, hook="__array_ufunc__"):
        return _numpy_at(ufunc, a, indices, b)
    a_arr = _in_place(a, "a", fn)
    parts = list(indices) if isinstance(indices, tuple) else [indices]
    for i, p in enumerate(parts):
        if isinstance(p, (list, tuple)):
            q = _rectangular(p, fn, "indices")
            parts[i] = q if q.size else np.zeros(0, np.intp)  # numpy: an empty one is integers
    if len(parts) > a_arr.ndim:
        raise _tj.IndexOutOfRange(f"tensorjit: too many indices: a has {a_arr.ndim} "
                                  f"dimension(s), indexed with {len(parts)}")
    target = a_arr
    if not parts:  # a[()] += b: the whole of a, as one update of a one-row view of it
        target, parts = a_arr[np.newaxis], [np.zeros((), np.intp)]
    arrays = []
    for i, p in enumerate(parts):
        q = _rectangular(p, fn, "indices")
        if q.dtype.kind in "fcUS":  # numpy: IndexError (booleans aside: refused below)
            raise _IndexTypeError(f"tensorjit: {fn} takes integer indices, not {q.dtype} "
                                  "(numpy raises IndexError for them too)")
        arrays.append(np.asarray(_int64_indices(q, f"a's dimension {i} of size "
                                                   f"{target.shape[i]}")))
    try:
        parts = np.broadcast_arrays(*arrays)
    except ValueError as e:
        raise _IndexShapeError(f"tensorjit: shape mismatch: {e}") from None
    tuples = np.stack(parts, axis=-1)
    if tuples.dtype.kind not in "iu":
        raise _tj.TypeMismatch(f"tensorjit: indices have dtype {tuples.dtype}; {fn} takes "
                               "integer indices (no slices, None, Ellipsis or booleans)")
    dt = target.dtype
    if dt.itemsize == 2 and "bfloat16" in getattr(dt.type, "__name__", ""):
        # ml_dtypes' type (known by its name, as the extension knows it), not
        # numpy's: its ufuncs were not measured against the library
        return _checked_numpy_at(ufunc, a_arr, indices, b, target, tuples)
    b_arr = _rectangular(b, fn, "b")
    if reduction == "sub" and dt == np.bool_ and b_arr.dtype == np.bool_:
        # numpy refuses only a subtract in bool (an integer b is an integer
        # subtract, cast back), and names a bad index first
        _check_bounds(target, tuples)
        raise _tj.TypeMismatch(f"tensorjit: {fn} of bool: numpy refuses a boolean subtract "
                               "(use np.logical_xor)")
    if _NUMPY2 and dt.kind in "iu" and type(b) is int and not (
            np.iinfo(dt).min <= b <= np.iinfo(dt).max):
        # numpy's (NEP 50 has numpy 2's ufuncs refuse such an int; 2.5's
        # ufunc.at computes in int64 and wraps): the exemption below would
        # wrap it unasked
        return _checked_numpy_at(ufunc, a_arr, indices, b, target, tuples)
    if b_arr.dtype != dt:
        # numpy 1 reads a Python number b by its value; numpy 2's ufunc.at
        # makes an array of it first (int64, float64), which result_type
        # then reads by its dtype alone, as numpy 2 reads any array
        try:
            loop = np.result_type(target, b_arr)  # numpy's loop
        except TypeError:  # no common type (datetime and float): numpy's ufunc.at decides
            return _checked_numpy_at(ufunc, a_arr, indices, b, target, tuples)
        if loop != dt and not (reduction in ("sum", "sub", "prod") and dt.kind in "iu"
                               and loop.kind in "iu" and b_arr.dtype.kind in "biu"):
            return _checked_numpy_at(ufunc, a_arr, indices, b, target, tuples)
        b_arr = b_arr.astype(dt)  # integers wrap, as numpy's cast back does
    if dt.kind == "f" and (
            reduction in ("max", "min") and _may_tie_signed_zeros(b_arr, target, tuples)
            or dt.itemsize == 2 and (np.isnan(b_arr).any()
                                     or np.isnan(_selected(target, tuples)).any())):
        return _checked_numpy_at(ufunc, a_arr, indices, b, target, tuples)
    shape = tuples.shape[:-1] + target.shape[len(parts):]
    try:
        updates = np.broadcast_to(b_arr, shape)
    except ValueError as e:
        raise _tj.SignatureError(f"tensorjit: {fn}'s b of shape {b_arr.shape} does not "
                                 f"broadcast to the selected elements' shape {shape}: {e}") from e
    _scatter_into(target, lambda out, u: _tj.scatter_nd_update(
        target, tuples, u, reduction, index_policy="negative-wraps", out=out), updates)


def _int_range(dt: np.dtype) -> Tuple[int, int]:
    """An integer dtype's least and greatest value (np.iinfo's, kept per
    dtype: the fast paths ask on every call)."""
    return _INT_RANGES.get(dt) or _INT_RANGES.setdefault(
        dt, (int(np.iinfo(dt).min), int(np.iinfo(dt).max)))


def _at_fast(ufunc: np.ufunc, reduction: str, a: Any, indices: Any, b: Any) -> bool:
    """The usual *_at call that _at_plain does not take as it comes (b a
    Python number, b to broadcast, a tuple of index arrays), made as _at's
    general path below would make it, without the steps that cost a small
    call several times numpy's (index arrays broadcast and stacked, b by
    np.broadcast_to): a an ndarray written in place, native int32 or int64
    index arrays of one shape, b an array of a's dtype or a Python number
    a's dtype holds. True when it served the call (under numpy 2, also
    when it handed a Python number numpy's loop may give other bits for to
    numpy's ufunc.at, the indices checked first); False, having written
    nothing, when the general path must: every other kind of call, those
    numpy's ufunc.at serves, and any the library refuses (the general path
    words the error or copes)."""
    if not _writable_in_place(a):
        return False
    dt = a.dtype
    summed = reduction in ("sum", "sub", "prod")
    value = None  # a Python number each update is, read as dt
    if type(b) is np.ndarray:
        # f16's NaNs are numpy's (and a float max's or min's zeros: _at_plain)
        if not (b.dtype == dt and (dt.kind in "iu" or dt.kind == "f" and dt.itemsize > 2)):
            return False
    elif not (summed or reduction in ("max", "min")):
        return False
    elif _NUMPY2:
        value = _numpy2_number(dt, b, summed)
        if value is None:
            # numpy's loop may give other bits: numpy's call, as the general
            # path would make it after checks that cost a small call several
            # times numpy's own (float64 keeps that path: it settles a zero's
            # ties there)
            if type(b) not in (int, float) or dt.char == "d" or not _tj._at_in_bounds(a, indices):
                return False
            _worded_numpy_at(ufunc, a, indices, b, dt)
            return True
    elif type(b) is int and dt.kind in "iu":
        lo, hi = _int_range(dt)
        if not lo <= b <= hi:  # a value a's dtype holds is itself, whatever the loop's type
            return False
        value = b
    elif type(b) in (int, float) and dt.kind == "f" and dt.itemsize > 2 and (summed or b != 0):
        if not _keeps_float(dt, b):
            return False  # numpy's ufunc.at computes in float64 and casts back
        value = b
    else:
        return False
    if type(indices) is np.ndarray:
        shape = indices.shape + a.shape[1:]
    elif type(indices) is tuple and 0 < len(indices) <= a.ndim and type(indices[0]) is np.ndarray:
        shape = indices[0].shape + a.shape[len(indices):]  # _at_plain checks the others
    else:
        return False
    if value is not None:
        updates = np.empty(shape, dt)
        updates.fill(value)
    else:
        if b.shape == shape:
            return False  # _at_plain has declined these very arguments
        updates = _filled(b, dt, shape)
        if updates is None:
            return False
    return _tj._at_plain(a, indices, updates, reduction)


_F32_MAX = 3.4028234663852886e38
_F32 = struct.Struct("f")
_UINT64 = np.dtype(np.uint64)


def _numpy2_number(dt: np.dtype, b: Any, summed: bool) -> Any:
    """b, a Python int or float, where numpy 2's ufunc.at gives the bits the
    library gives with every update b read as dt, whichever loop numpy
    takes: b's own type (numpy 2.0 to 2.5's ufunc.at makes an int64 or
    float64 array of it, numpy#32076: a uint64 a with a small int b is
    added in float64 there) or dt's (numpy#32094, merged after 2.5, reads
    it as NEP 50's weak scalar); None where the two may differ:
    - integer dt: b within dt's range, but not uint64 with b below 2**63
      (uint64 and int64 promote to float64). An integer loop wider than dt
      wraps back to dt's bits for +, - and *, and max and min are exact;
    - float32 or float64: b a value of dt exactly (a NaN only for float64),
      an int b within int64. float64's loop rounds a float32 +, - or *
      twice, to 53 bits and then to 24, which gives the once-rounded bits
      (53 >= 2 * 24 + 2), but a float32 max or min in float64 would quiet a
      signalling NaN of a's that the library keeps: numpy's; float64's max
      and min leave a zero b to the general path, as numpy 1's rule does."""
    kind = type(b)
    if kind is float:
        char = dt.char
        if char == "d":  # float64: numpy's loop is a's own
            return b if summed or b != 0 else None
        # a NaN through a float64 loop and back: left to numpy (unmeasured)
        return b if char == "f" and summed and b == b and _float32_holds(b) else None
    if kind is not int:
        return None
    if dt.kind in "iu":
        lo, hi = _int_range(dt)
        return b if lo <= b <= hi and not (b < 2**63 and dt == _UINT64) else None
    char = dt.char
    if char not in "fd" or not (summed or char == "d" and b != 0) or not -2**63 <= b < 2**63:
        return None
    return b if float(b) == b and (char == "d" or _float32_holds(b)) else None


def _float32_holds(b: Any) -> bool:
    """Whether the Python number b is a float32 value exactly (infinities
    too; b no NaN)."""
    if not -_F32_MAX <= b <= _F32_MAX:
        return b in (math.inf, -math.inf)
    return _F32.unpack(_F32.pack(b))[0] == b


def _keeps_float(dt: np.dtype, b: Any) -> bool:
    """Whether numpy 1 computes a float32 or float64 array's ufunc.at with a
    Python int or float b in the array's own type: np.result_type(a, b) is
    dt, by b's value (np.min_scalar_type). On numpy 1.24: an int in
    [-32768, 65535] (int16 or uint16) keeps float32, one of int32's or
    more makes float64; a float in (-3.4e38, 3.4e38), an infinity or a NaN
    keeps float32 (3.3999999e38 does, 3.4e38 makes float64); float64 keeps
    every int of int64 or uint64 and every float (test_numpy_at holds these
    bounds against numpy's)."""
    if type(b) is int:
        return -32768 <= b <= 65535 if dt.itemsize == 4 else -2**63 <= b < 2**64
    return dt.itemsize == 8 or -3.4e38 < b < 3.4e38 or not math.isfinite(b)


def _may_tie_signed_zeros(b: np.ndarray, target: np.ndarray, tuples: np.ndarray) -> bool:
    """Whether a maximum or minimum may meet a tie of +0 and -0, where numpy
    and the library keep different ones: b holds zeros of both signs, or
    zeros of one sign and a's selected elements a zero of the other (every
    running value is one of a's or b's, so nothing else can tie). b without
    a zero costs one comparison over b."""
    zero = b == 0
    if not zero.any():
        return False
    neg = np.signbit(b[zero])
    if neg.all() != neg.any():
        return True
    sel = _selected(target, tuples)
    return bool(((sel == 0) & (np.signbit(sel) != neg[0])).any())


def _check_bounds(target: np.ndarray, tuples: np.ndarray) -> None:
    """IndexOutOfRange for an index tuple beyond [-n, n) of target's dims,
    naming the first, as the library's check does on its path."""
    shape = np.array(target.shape[:tuples.shape[-1]], np.int64)
    bad = (tuples < -shape) | (tuples >= shape)
    if bad.any():
        pos = np.unravel_index(int(np.argmax(bad)), bad.shape)
        raise _tj.IndexOutOfRange(f"tensorjit: index {tuples[pos]} is out of range for a's "
                                  f"dimension {pos[-1]} of size {shape[pos[-1]]}")


def _selected(target: np.ndarray, tuples: np.ndarray) -> np.ndarray:
    """The elements of target the index tuples select (a copy)."""
    _check_bounds(target, tuples)
    return target[tuple(np.moveaxis(tuples, -1, 0))]


def _checked_numpy_at(ufunc: np.ufunc, a: Any, indices: Any, b: Any, target: np.ndarray,
                      tuples: np.ndarray) -> None:
    """numpy's ufunc.at for a call _at hands over, its indices checked first:
    numpy's applies the updates before a bad index and then raises; here a
    bad one writes nothing, as on the library's path."""
    _check_bounds(target, tuples)
    return _worded_numpy_at(ufunc, a, indices, b, target.dtype)


def _worded_numpy_at(ufunc: np.ufunc, a: Any, indices: Any, b: Any, dtype: np.dtype) -> None:
    """numpy's ufunc.at, its indices and a checked, what numpy refuses of b
    a tensorjit error naming it (a's dtype given)."""
    try:
        return _numpy_at(ufunc, a, indices, b)
    except (TypeError, ValueError, OverflowError) as e:
        # the indices and a are checked: what numpy refuses here is b (a
        # type it has no loop for, a value past a's dtype, a shape that
        # does not broadcast); the package's class, naming b, numpy's own
        # error as the cause
        fn = f"{ufunc.__name__}_at"
        what = f"b ({type(b).__name__}" + (f" of dtype {b.dtype}" if isinstance(b, np.ndarray)
                                          else "") + f") with a of dtype {dtype}"
        if isinstance(e, OverflowError):
            raise _OverflowError(f"tensorjit: {fn}: {what}: b does not fit: {e}") from e
        if isinstance(e, TypeError):
            raise _tj.TypeMismatch(f"tensorjit: {fn}: numpy's {ufunc.__name__}.at refuses "
                                   f"{what}: {e}") from e
        raise _tj.SignatureError(f"tensorjit: {fn}: numpy's {ufunc.__name__}.at refuses "
                                 f"{what}: {e}") from e
