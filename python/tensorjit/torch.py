"""torch's names for tensorjit's kernels: gather, index_select, index_add,
scatter, scatter_add and scatter_reduce, with torch's argument order and
semantics (torch tensors in and out through DLPack, zero copies where the
layout allows; numpy arrays work too). Each is a thin mapping onto one op
of the library: index_select onto Gather, gather onto GatherElements,
index_add onto ScatterNDUpdate (dim 0) or ScatterElementsUpdate, the
scatters onto ScatterElementsUpdate.

Indices follow torch: an index outside [0, n) raises
tensorjit.IndexOutOfRange (an IndexError) and writes nothing. Where torch
lets index be smaller than input in the dims but dim (gather, scatter,
scatter_add, scatter_reduce), and src larger than index, so do these:
that is the ops' torch_dims flavour, which reads input and src where they
lie (no cut view, no copy). Of duplicate indices, scatter keeps the last
in row-major order (torch leaves it undefined).
"""

from __future__ import annotations

from typing import Any, Optional

from . import _tensorjit as _tj

__all__ = ["gather", "index_select", "index_add", "scatter", "scatter_add",
           "scatter_reduce"]

_REDUCE = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "max", "amin": "min",
           "add": "sum", "multiply": "prod"}


def _shape(t: Any) -> tuple:
    return tuple(t.shape)


def _dim(dim: int, ndim: int) -> int:
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise _tj.SignatureError(f"tensorjit: dim {dim} is out of range for rank {ndim}")
    return dim + ndim if dim < 0 else dim


def gather(input: Any, dim: int, index: Any, *, sparse_grad: bool = False,
           out: Optional[Any] = None) -> Any:
    """torch.gather: out[i...] = input[i... with dim's coordinate replaced
    by index[i...]]; index has input's rank and dims no larger than input's
    but along dim; the result has index's shape."""
    return _tj.gather_elements(input, index, _dim(dim, len(_shape(input))), torch_dims=True,
                               out=out)


def index_select(input: Any, dim: int, index: Any, *, out: Optional[Any] = None) -> Any:
    """torch.index_select: the slices of input along dim at index (a 1-D or
    0-D integer tensor), in index's order."""
    if len(_shape(index)) > 1:
        raise _tj.SignatureError("tensorjit: index_select's index must be 1-D or 0-D")
    result = _tj.gather(input, index, dim, index_policy="error", out=out)
    if len(_shape(index)) == 0 and out is None and hasattr(result, "unsqueeze"):
        return result.unsqueeze(dim)  # torch keeps the dim for a 0-D index
    return result


def index_add(input: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1,
              out: Optional[Any] = None) -> Any:
    """torch.index_add: a copy of input where, for every i of index (1-D),
    the slice at index[i] along dim gets alpha * source's slice i added, in
    order (duplicates all add)."""
    ndim = len(_shape(input))
    dim = _dim(dim, ndim)
    if alpha != 1:
        source = source * alpha
    if dim == 0:
        tuples = index.reshape(-1, 1) if hasattr(index, "reshape") else index
        return _tj.scatter_nd_update(input, tuples, source, "sum", index_policy="error",
                                     out=out)
    # along another dim: index spread over source's shape, one element each
    view = [1] * len(_shape(source))
    view[dim] = -1
    full = index.reshape(view).expand(*_shape(source)) if hasattr(index, "expand") else \
        __import__("numpy").broadcast_to(index.reshape(view), _shape(source))
    return _tj.scatter_elements_update(input, full, source, dim, "sum", out=out)


def _full_like_index(input: Any, index: Any, value: Any) -> Any:
    if hasattr(input, "new_full"):
        return input.new_full(_shape(index), value)
    import numpy as np
    return np.full(_shape(index), value, dtype=np.asarray(input).dtype)


def scatter(input: Any, dim: int, index: Any, src: Any = None, *, value: Any = None,
            reduce: Optional[str] = None, out: Optional[Any] = None) -> Any:
    """torch.scatter: a copy of input where out[i... with dim's coordinate
    replaced by index[i...]] = src[i...] (or value); src may be larger than
    index (only the elements at index's positions are read). reduce "add"
    or "multiply" combines instead of replacing."""
    dim = _dim(dim, len(_shape(input)))
    if src is None:
        if value is None:
            raise _tj.SignatureError("tensorjit: scatter takes src or value")
        src = _full_like_index(input, index, value)
    elif not hasattr(src, "shape"):
        src = _full_like_index(input, index, src)  # torch.scatter(input, dim, index, 2.0)
    reduction = "none" if reduce is None else _REDUCE.get(reduce)
    if reduction is None or reduce not in (None, "add", "multiply"):
        raise _tj.SignatureError(f"tensorjit: scatter's reduce is 'add' or 'multiply', not "
                                 f"{reduce!r}")
    return _tj.scatter_elements_update(input, index, src, dim, reduction, torch_dims=True,
                                       out=out)


def scatter_add(input: Any, dim: int, index: Any, src: Any, *,
                out: Optional[Any] = None) -> Any:
    """torch.scatter_add: scatter with every update added (duplicates all add)."""
    return scatter_reduce(input, dim, index, src, "sum", out=out)


def scatter_reduce(input: Any, dim: int, index: Any, src: Any, reduce: str, *,
                   include_self: bool = True, out: Optional[Any] = None) -> Any:
    """torch.scatter_reduce: a copy of input where every src[i...] is
    combined into out[i... with dim's coordinate replaced by index[i...]] by
    reduce: "sum", "prod", "mean" (integers: the floor), "amax", "amin".
    include_self=False leaves input's value out of every position some
    update reaches."""
    dim = _dim(dim, len(_shape(input)))
    reduction = _REDUCE.get(reduce) if reduce not in ("add", "multiply") else None
    if reduction is None:
        raise _tj.SignatureError(f"tensorjit: unknown reduce {reduce!r} (sum, prod, mean, "
                                 "amax, amin)")
    return _tj.scatter_elements_update(input, index, src, dim, reduction,
                                       use_init_val=include_self, torch_dims=True, out=out)
