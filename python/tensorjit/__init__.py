"""tensorjit: shape-specialized indexing kernels for numpy and torch:
GatherND, Gather, GatherElements, ScatterUpdate, ScatterNDUpdate,
ScatterElementsUpdate and the embedding bags (embedding_bag_offsets,
embedding_bag_packed, embedding_segments: OpenVINO's EmbeddingBag ops,
SPEC section 10), JIT-compiled by LLVM (libtensorjit).

The calls are a C extension (tensorjit._tensorjit) over the library. A call
takes numpy arrays (anything numpy or the buffer protocol can describe) or
DLPack tensors (torch; the result is then a tensor too), finds the kernel
of its *family* (op, element and index types, ranks, attributes) and runs
it: every dim is passed at call time (a dynamic kernel, SPEC section 6), so
a new array length never compiles anything.

Every error is a tensorjit.Error: an invalid signature or argument a
SignatureError (also a ValueError, with the library's message), an index
out of range under the index policy an IndexOutOfRange (also an
IndexError; nothing is written), a dtype without a kernel type a
TypeMismatch (also a TypeError), anything else a KernelError (also a
RuntimeError).

tensorjit.numpy and tensorjit.torch hold the names numpy's and torch's
users know (take, take_along_axis, put_along_axis, add_at and its kin
subtract_at, multiply_at, maximum_at, minimum_at; gather,
index_select, index_add, scatter, scatter_add, scatter_reduce,
embedding_bag, embedding).
"""

from __future__ import annotations

import operator as _operator
from typing import Any, Optional, Sequence

import numpy as _np

from . import _tensorjit
from ._tensorjit import (  # noqa: F401  (the public names)
    DynamicKernel, Error, IndexOutOfRange, KernelError, SignatureError, TypeMismatch,
    cache_stats, embedding_bag_offsets, embedding_bag_offsets_info, embedding_bag_packed,
    embedding_bag_packed_info, embedding_segments, embedding_segments_info, gather,
    gather_elements, gather_elements_info, gather_info, gather_nd, gather_nd_info,
    library_version, open_cache, scatter_elements_update, scatter_elements_update_info,
    scatter_nd_update, scatter_nd_update_info, scatter_update,
    scatter_update_info, set_kernel_limit, shutdown, stats,
)

from . import numpy, torch  # noqa: E402,F401  (the drop-in namespaces)

__version__ = "0.1.0"

__all__ = [
    "gather_nd", "scatter_update", "gather_nd_info", "scatter_update_info",
    "gather", "gather_elements", "scatter_nd_update", "scatter_elements_update",
    "gather_info", "gather_elements_info", "scatter_nd_update_info",
    "scatter_elements_update_info", "compile_dynamic", "DynamicKernel", "library_version",
    "shutdown", "stats", "set_kernel_limit", "open_cache", "cache_stats", "Error", "SignatureError",
    "IndexOutOfRange", "TypeMismatch", "KernelError", "numpy", "torch",
    "embedding_bag_offsets", "embedding_bag_packed", "embedding_segments",
    "embedding_bag_offsets_info", "embedding_bag_packed_info", "embedding_segments_info",
]


def _int(value: Any, what: str, bits: int = 64) -> int:
    """value as an int of the signature's width, or the package's error
    naming what (operator.index's TypeError, and the C half's OverflowError
    for a value past the width, named nothing)."""
    try:
        v = _operator.index(value)
    except TypeError:
        raise TypeMismatch(f"tensorjit: {what} must be an integer, not {type(value).__name__} "
                           f"({value!r})") from None
    if not -2 ** (bits - 1) <= v < 2 ** (bits - 1):
        raise SignatureError(f"tensorjit: {what} = {v} does not fit the signature's int{bits}")
    return v


def _dims(shape: Optional[Sequence[Optional[int]]], what: str) -> Optional[list]:
    if shape is None:
        return None
    try:
        dims = list(shape)
    except TypeError:
        raise TypeMismatch(f"tensorjit: {what} must be a sequence of dims (ints, None or -1 "
                           f"for a dynamic dim), not {type(shape).__name__}") from None
    out = []
    for d in dims:
        d = -1 if d is None else _int(d, what)
        if d < -1:
            raise SignatureError(f"tensorjit: {what} has dim {d}; a dim is >= 0, or None or -1 "
                                 "(dynamic)")
        out.append(d)
    return out


def _np_dtype(dtype: Any, what: str) -> Any:
    try:
        return _np.dtype(dtype)
    except TypeError as e:
        raise TypeMismatch(f"tensorjit: {what} {dtype!r} is no numpy dtype: {e}") from e


def _bounds(bounds: Optional[Sequence[Optional[int]]], what: str) -> Optional[list]:
    if bounds is None:
        return None
    try:
        return [0 if b is None else b for b in bounds]
    except TypeError:
        raise TypeMismatch(f"tensorjit: {what} must be a sequence of bounds (ints, None or 0 "
                           f"for none), not {type(bounds).__name__}") from None


def compile_dynamic(op: str, data_shape: Sequence[Optional[int]],
                    indices_shape: Sequence[Optional[int]],
                    updates_shape: Optional[Sequence[Optional[int]]] = None, *,
                    dtype: Any, index_dtype: Any, axis: int = 0, batch_dims: int = 0,
                    opset: Optional[int] = None, index_policy: Optional[str] = None,
                    reduction: str = "none", use_init_val: bool = True,
                    torch_dims: bool = False,
                    data_bound: Optional[Sequence[Optional[int]]] = None,
                    indices_bound: Optional[Sequence[Optional[int]]] = None,
                    updates_bound: Optional[Sequence[Optional[int]]] = None) -> DynamicKernel:
    """The dynamic kernel (a DynamicKernel) of op ("gather_nd", "gather",
    "gather_elements", "scatter_update", "scatter_nd_update",
    "scatter_elements_update", "embedding_bag_packed", or the op's name
    "GatherND"; not the bags with offsets or segment ids) for shapes whose
    None (or -1) entries are known only at call time: one kernel for every
    shape of the family. *_bound give upper bounds of dynamic dims at their
    positions (None or 0: none). dtype and index_dtype: numpy dtypes of data
    (and updates) and indices. torch_dims: torch's index dims
    (gather_elements, scatter_elements_update: see their docstrings). index_policy defaults to "error", as for
    every op's function. SignatureError (a
    ValueError) with the library's message when no shape of the family is
    valid.

        k = tensorjit.compile_dynamic("gather", (None, 64), (None,),
                                      dtype=np.float32, index_dtype=np.int64)
        k(table, ids)   # any number of rows and of ids
    """
    code, name, has_updates = _tensorjit._op_code(op)
    if name in ("EmbeddingBagOffsets", "EmbeddingSegmentsSum"):
        call = "embedding_bag_offsets" if name == "EmbeddingBagOffsets" else "embedding_segments"
        raise SignatureError(f"tensorjit: compile_dynamic does not make {name} kernels: a "
                             f"DynamicKernel takes data, indices and updates, not "
                             f"{'offsets' if name == 'EmbeddingBagOffsets' else 'segment_ids'}; "
                             f"tensorjit.{call}() runs its family's dynamic kernel already")
    if index_policy is None:
        index_policy = "error"
    if opset is None:
        opset = (15 if name == "ScatterNDUpdate" and reduction != "none"
                 else 12 if name == "ScatterElementsUpdate" else 0)
    index_np = _np_dtype(index_dtype, "index_dtype")
    index_type = _tensorjit._dtype_code(index_np)
    if index_np.kind not in "iu":
        raise TypeMismatch(f"tensorjit: index_dtype {index_np} is no integer dtype")
    for what, shape in (("data_shape", data_shape), ("indices_shape", indices_shape)):
        if shape is None:
            raise SignatureError(f"tensorjit: {what} needs a shape (ints, None or -1 for a "
                                 "dynamic dim)")
    if has_updates and updates_shape is None:
        raise SignatureError(f"tensorjit: {name} takes updates: give updates_shape")
    if not has_updates and updates_shape is not None:  # it was ignored
        raise SignatureError(f"tensorjit: {name} takes no updates: updates_shape must be None")
    return _tensorjit._compile_dynamic(
        code, _tensorjit._dtype_code(_np_dtype(dtype, "dtype")), index_type,
        _dims(data_shape, "data_shape"), _dims(indices_shape, "indices_shape"),
        _dims(updates_shape, "updates_shape") if has_updates else None,
        _int(opset, "opset", 32), _int(axis, "axis"), _int(batch_dims, "batch_dims", 32),
        _tensorjit._policy_code(index_policy),
        _tensorjit._reduction_code(reduction), 0 if use_init_val else 1,
        _bounds(data_bound, "data_bound"), _bounds(indices_bound, "indices_bound"),
        _bounds(updates_bound, "updates_bound") if has_updates else None,
        bool(torch_dims))
