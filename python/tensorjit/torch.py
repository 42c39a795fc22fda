"""torch's names for tensorjit's kernels: gather, index_select, index_add,
scatter, scatter_add, scatter_reduce, and torch.nn.functional's
embedding_bag and embedding, with torch's argument order and
semantics (torch tensors in and out through DLPack, zero copies where the
layout allows; numpy arrays work too). Each is a thin mapping onto one op
of the library: index_select onto Gather, gather onto GatherElements,
index_add onto ScatterNDUpdate (dim 0) or ScatterElementsUpdate, the
scatters onto ScatterElementsUpdate, embedding_bag onto EmbeddingBagOffsets
(1-D input) or EmbeddingBagPacked (2-D), embedding onto Gather.

Indices follow torch: an index outside [0, n) raises
tensorjit.IndexOutOfRange (an IndexError) and writes nothing. Where torch
lets index be smaller than input in the dims but dim (gather, scatter,
scatter_add, scatter_reduce), and src larger than index, so do these:
that is the ops' torch_dims flavour, which reads input and src where they
lie (no cut view, no copy); a 0-D tensor is a vector of one, as in
torch. Of duplicate indices, scatter keeps the last in row-major order
(torch leaves it undefined). Extensions, where torch refuses: an int32
index for gather, an index of any integer type for the scatters,
index_select, index_add and embedding (torch takes int64 for gather and
the scatters, int32 or int64 for the other three), a weight of any rank
>= 1 for the embeddings (torch: 2-D).

The kernels are forward-only: a tensor that requires grad (a module's
weight) is read detached (by the library, after DLPack refuses it), and
results carry no autograd history. Python lists and tuples are read as
numpy reads them. Errors, and the warning about a tensor
that requires grad, name the arguments by torch's names (weight, input,
per_sample_weights), not the library's.
"""

from __future__ import annotations

import math
import numbers
import re
import sys
from typing import Any, List, Optional, Tuple

from . import _tensorjit as _tj

__all__ = ["gather", "index_select", "index_add", "scatter", "scatter_add",
           "scatter_reduce", "embedding_bag", "embedding"]

_REDUCE = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "max", "amin": "min",
           "add": "sum", "multiply": "prod"}


def _shape(t: Any) -> tuple:
    shape = getattr(t, "shape", None)
    if shape is None:  # a list or tuple, read as numpy reads it
        import numpy as np
        return np.shape(t)
    try:
        return tuple(shape)
    except Exception:  # a tracer's stand-in (torch.fx's Proxy): no dims to read
        raise _tj.SignatureError(f"tensorjit: a {type(t).__name__} has no concrete shape: "
                                 "torch.fx and torch.jit.script cannot trace tensorjit's "
                                 "kernels; call them outside the traced code") from None


def _rank(t: Any) -> int:
    """len(_shape(t)), without making the shape of a tensor or array."""
    ndim = getattr(t, "ndim", None)
    return ndim if isinstance(ndim, int) else len(_shape(t))


def _array(t: Any) -> Any:
    """A list or tuple as numpy's array, where this module reshapes it or
    tells it from a scalar; anything else as it is. (The library reads
    lists itself; a tensor that requires grad it reads detached.)"""
    if isinstance(t, (list, tuple)):
        import numpy as np
        return np.asarray(t)
    return t


def _operand(t: Any, name: str, op: str) -> Any:
    """An operand of index_select or index_add as an array where it is none:
    a list, a tuple or a Python number (a 0-D array, a vector of one as
    torch's 0-D tensor is) as numpy reads it; a tensor or an array as it is;
    None refused, naming it. (A scalar index kept its dim only as a 0-D
    tensor: index 1 dropped it, and a scalar or None input recursed.)"""
    if hasattr(t, "shape"):
        return t
    if t is None:
        raise _tj.TypeMismatch(f"tensorjit: {op}'s {name} must be a tensor or an array, not None")
    import numpy as np
    return np.asarray(t)


def _as_int(value: Any, name: str) -> int:
    """An integer argument, as torch checks it (a float or a bool is refused,
    not cut or read as 0 or 1)."""
    import operator
    if isinstance(value, bool):
        raise _tj.TypeMismatch(f"tensorjit: {name} must be an integer, not bool ({value!r})")
    try:
        return operator.index(value)
    except TypeError:
        raise _tj.TypeMismatch(f"tensorjit: {name} must be an integer, not "
                               f"{type(value).__name__} ({value!r})") from None


_TORCH_CAST = ((r"\bindices\.astype\(numpy\.int64\)", "index.long()"),)


def _renamed_for(e: Exception, index: Any, names: Tuple[Tuple[str, str], ...]) -> Exception:
    """_renamed, with numpy's cast advice in torch's words where index is a tensor."""
    return _renamed(e, (_TORCH_CAST if hasattr(index, "long") else ()) + names)


def _renamed(e: Exception, names: Tuple[Tuple[str, str], ...]) -> Exception:
    """e, naming the library's inputs by the caller's names (each pair: a
    pattern of the library's word, then the caller's word): raised from an
    except clause, which costs a call nothing until it raises."""
    message = _in_words(str(e), names)
    return e if message == str(e) else type(e)(message)


def _in_words(message: str, names: Tuple[Tuple[str, str], ...]) -> str:
    for ours, theirs in names:
        message = re.sub(ours, theirs, message)
    return message


def _torch_word(function: str, word: str) -> str:
    """The library's name of an input (word) as torch names it in function
    (the innermost of this module's functions on the stack). The C extension
    asks, for its warning about a tensor that requires grad, which it reads
    where the library's words are all it has."""
    names = (_BAG_NAMES if "embedding_bag" in function else
             _EMBEDDING_NAMES if "embedding" in function else
             _INDEX_ADD_NAMES if "index_add" in function else _INDEX_NAMES)
    return _in_words(word, names)


# the library's names of gather's and scatter's inputs, and torch's
_INDEX_NAMES = ((r"\bindices\[([^\]]*)\] = \[(-?\d+)\]", r"index[\1] = \2"),  # a 1-tuple
                (r"\bindices'", "index's"), (r"\bindices\b", "index"),
                (r"\bupdates'", "src's"), (r"\bupdates\b", "src"),
                (r"\bdata'", "input's"), (r"\bdata\b", "input"))
_INDEX_ADD_NAMES = tuple((ours, theirs.replace("src", "source")) for ours, theirs in _INDEX_NAMES)


def _dim(dim: int, ndim: int) -> int:
    if isinstance(dim, bool):  # torch: "argument 'dim' must be int, not bool"
        raise _tj.TypeMismatch("tensorjit: dim must be an integer, not bool")
    if type(dim) is not int:
        dim = _as_int(dim, "dim")
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise _tj.SignatureError(f"tensorjit: dim {dim} is out of range for rank {ndim}")
    return dim + ndim if dim < 0 else dim


def _vector(t: Any) -> Any:
    """A 0-D tensor or array as a view of shape (1,), as torch reads a
    scalar in these ops (a vector of one); anything else as it is."""
    return t.reshape(1) if hasattr(t, "reshape") and _rank(t) == 0 else t


def _scalars(input: Any, *ts: Any) -> bool:
    """Some of input and ts 0-D and none of rank above 1: torch's ops take
    0-D and 1-D as one rank (a scalar is a vector of one), the library does
    not. (input of rank 2 or more, the usual call, decides it alone.)"""
    if _rank(input) > 1:
        return False
    ranks = [_rank(input)] + [_rank(t) for t in ts]
    return 0 in ranks and max(ranks) <= 1


def _shaped(result: Any, out: Any, shape: tuple) -> Any:
    """out when given (its own shape), else the result in torch's shape."""
    return out if out is not None else result.reshape(shape)


def _empty_index(index: Any) -> Any:
    """An index that holds no elements as int64, whatever its dtype: torch's
    gather and scatters check index's dtype only when it holds elements (its
    own OpInfo samples gather with an empty uint8 index), and an empty index
    reads nothing, so the cast costs nothing and every shape rule still
    applies. Anything else as it is, for the library to check."""
    if 0 in _shape(index) and hasattr(index, "dtype"):
        return index.long() if hasattr(index, "long") else index.astype("int64")
    return index


def _no_elements(index: Any) -> bool:
    """index holds no element: torch 1.13's gather and scatters then skip
    every shape rule (index's rank and dims, src's), keeping only dim's
    range and src's dtype; an empty index of any shape reads and writes
    nothing."""
    return 0 in _shape(index)


def _empty_of_rank(t: Any, rank: int) -> Any:
    """t's first zero elements, of shape (0,) * rank (its dtype kept)."""
    flat = t.reshape(-1)[:0]
    return flat.reshape((0,) * rank)


def _plain_dim(dim: Any, input: Any, index: Any, *src: Any) -> Optional[int]:
    """dim counted from 0 for the usual call, which the library takes as it
    comes: input, index (holding elements) and src (where given) tensors or
    arrays of one rank >= 1, dim an int within it; None for any other call
    (lists, scalars, an empty index, a bad dim), which the general path
    reads. The general path's steps cost a small call about its kernel's
    time again."""
    n = getattr(input, "ndim", None)
    if type(n) is not int or n < 1 or type(dim) is not int or not -n <= dim < n or \
            getattr(index, "ndim", None) != n or any(getattr(t, "ndim", None) != n for t in src) \
            or 0 in getattr(index, "shape", (0,)):
        return None
    return dim + n if dim < 0 else dim


def gather(input: Any, dim: int, index: Any, *, sparse_grad: bool = False,
           out: Optional[Any] = None) -> Any:
    """torch.gather: out[i...] = input[i... with dim's coordinate replaced
    by index[i...]]; index has input's rank and dims no larger than input's
    but along dim (0-D and 1-D count as one rank, as in torch); the result
    has index's shape. An index with no elements, of any shape, gives an
    empty result of its shape, as torch's does."""
    plain = _plain_dim(dim, input, index)
    if plain is not None:
        try:
            return _tj.gather_elements(input, index, plain, torch_dims=True, out=out)
        except _tj.Error as e:
            raise _renamed_for(e, index, _INDEX_NAMES) from None
    index = _empty_index(_array(index))
    dim = _dim(dim, _rank(input))
    if _no_elements(index) and (_rank(index) != _rank(input) or _rank(input) == 0
                                or any(i > n for i, n in zip(_shape(index), _shape(input)))):
        rank = max(_rank(input), 1)
        flat_out = None if out is None else _empty_of_rank(out, rank)
        result = gather(_vector(input), dim, _empty_of_rank(index, rank), out=flat_out)
        return _shaped(result, out, _shape(index))
    if _scalars(input, index):
        return _shaped(gather(_vector(input), dim, _vector(index), out=_vector(out)), out,
                       _shape(index))
    try:
        return _tj.gather_elements(input, index, dim, torch_dims=True, out=out)
    except _tj.Error as e:
        raise _renamed_for(e, index, _INDEX_NAMES) from None


def index_select(input: Any, dim: int, index: Any, *, out: Optional[Any] = None) -> Any:
    """torch.index_select: the slices of input along dim at index (a 1-D or
    0-D integer tensor), in index's order; of a 0-D input, index holds one
    index and the result is 0-D."""
    input = _operand(input, "input", "index_select")
    index = _operand(index, "index", "index_select")
    if _rank(index) > 1:
        raise _tj.SignatureError(f"tensorjit: index_select's index must be 1-D or 0-D, not of "
                                 f"shape {tuple(_shape(index))}")
    if _rank(input) == 0:
        _dim(dim, 0)
        count = int(__import__("math").prod(_shape(index)))
        if count != 1:
            raise _tj.SignatureError(f"tensorjit: index_select of a 0-D input takes one index, "
                                     f"not {count}")
        return _shaped(index_select(_vector(input), 0, index.reshape(1), out=_vector(out)), out,
                       ())
    dim = _dim(dim, _rank(input))
    try:  # a 0-D index as a vector of one: torch keeps the dim (out= of that shape too)
        return _tj.gather(input, _vector(index), dim, index_policy="error", out=out)
    except _tj.Error as e:
        raise _renamed_for(e, index, _INDEX_NAMES) from None


def index_add(input: Any, dim: int, index: Any, source: Any, *, alpha: Any = 1,
              out: Optional[Any] = None) -> Any:
    """torch.index_add: a copy of input where, for every i of index (1-D),
    the slice at index[i] along dim gets alpha * source's slice i added, in
    order (duplicates all add). alpha is read as torch reads it for input's
    dtype (_alpha); alpha * source is rounded to that dtype before it is
    added, where torch fuses the two (an ulp apart where the product is
    inexact: alpha 0.1, not 2 or -1)."""
    input = _operand(input, "input", "index_add")
    index = _operand(index, "index", "index_add")
    source = _operand(source, "source", "index_add")
    ndim = _rank(input)
    dim = _dim(dim, ndim)
    if ndim == 0 and _rank(index) <= 1 and _rank(source) <= 1:  # torch: a vector of one
        return _shaped(index_add(_vector(input), dim, index.reshape(-1), source.reshape(-1),
                                 alpha=alpha, out=_vector(out)), out, ())
    if ndim == 1 and _rank(source) == 0:  # torch: of a 1-D input, a 0-D source is a vector
        source = _vector(source)
    _index_add_shapes(input, dim, index, source)
    if _dtype_name(index) in _WIDENED:  # dim 0's ScatterNDUpdate takes int32 and int64 alone,
        index = index.long() if hasattr(index, "long") else index.astype("int64")  # other dims any
    alpha = _alpha(alpha, input)
    if alpha != 1:
        source = _times(source, alpha)
    try:
        if dim == 0 and not _uint64(index):  # (ScatterNDUpdate: int32, int64)
            tuples = index.reshape(-1, 1) if hasattr(index, "reshape") else index
            return _tj.scatter_nd_update(input, tuples, source, "sum", index_policy="error",
                                         out=out)
        # along another dim (or a uint64 index, whose values int64 may not hold): index
        # spread over source's shape, one element each
        view = [1] * _rank(source)
        view[dim] = -1
        full = index.reshape(view).expand(*_shape(source)) if hasattr(index, "expand") else \
            __import__("numpy").broadcast_to(index.reshape(view), _shape(source))
        return _tj.scatter_elements_update(input, full, source, dim, "sum", out=out)
    except _tj.IndexOutOfRange as e:
        # the library names a position of the spread index (source's shape); index's own
        # position is its coordinate along dim
        message = re.sub(r"\bindices\[([^\]]*)\]",
                         lambda m: f"indices[{m.group(1).split(',')[dim].strip()}]", str(e))
        raise _renamed_for(type(e)(message), index, _INDEX_ADD_NAMES) from None
    except _tj.Error as e:
        raise _renamed_for(e, index, _INDEX_ADD_NAMES) from None


_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64,
             "uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}
# the index types narrower than int64, but int32, which index_add widens (uint64
# is left as it is: int64 could not hold all of it)
_WIDENED = ("int8", "int16", "uint8", "uint16", "uint32")
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38, "float64": float("inf")}


def _dtype_name(t: Any) -> str:
    dtype = getattr(t, "dtype", None)
    if dtype is None:  # a list, read as numpy reads it
        import numpy as np
        dtype = np.asarray(t).dtype
    return str(dtype).replace("torch.", "")


def _uint64(t: Any) -> bool:
    """Whether t (a tensor or an array) holds uint64 (numpy's, or torch's
    since 2.3); a torch index, signed, is told at the cost of one
    attribute, a third of _dtype_name's."""
    dtype = t.dtype
    if getattr(dtype, "is_signed", False):
        return False
    return str(dtype).replace("torch.", "") == "uint64"


def _alpha(alpha: Any, input: Any) -> Any:
    """index_add's alpha as torch reads it for input's dtype (_scalar_for)."""
    if type(alpha) is int and alpha == 1:  # the default, which every dtype holds
        return 1
    return _scalar_for(alpha, input, "index_add's alpha")


_SCALAR_INT_END: List[int] = []


def _scalar_int_end() -> int:
    """One past the largest Python int torch's Scalar takes: 2**63 (an
    int64) in torch 1.x, 2**64 where it also holds a uint64 (torch 2); asked
    once of the torch imported beside us (1.x's rule while there is none)."""
    if _SCALAR_INT_END:
        return _SCALAR_INT_END[0]
    torch = sys.modules.get("torch")
    if torch is None:
        return 2**63
    try:
        torch.zeros((), dtype=torch.float64, device="cpu").new_full((), 2**63)
        end = 2**64
    except (RuntimeError, OverflowError, TypeError):
        end = 2**63
    _SCALAR_INT_END.append(end)
    return end


def _python_scalar(v: Any) -> Any:
    """A 0-D tensor or array (torch's Scalar takes one) as its Python number
    (numpy's bool_, which is no Real, a Python bool); anything else as it is."""
    return v.item() if getattr(v, "ndim", None) == 0 and hasattr(v, "item") else v


def _scalar_value(alpha: Any, what: str) -> Any:
    """A Python scalar, or a 0-D tensor or array, as the Python number
    torch's Scalar holds: a real number, an integer within int64 (or uint64
    in torch 2)."""
    alpha = _python_scalar(alpha)
    if not isinstance(alpha, numbers.Real):
        raise _tj.TypeMismatch(f"tensorjit: {what} must be a real number, not "
                               f"{type(alpha).__name__} ({alpha!r})")
    if isinstance(alpha, numbers.Integral) and not -2**63 <= alpha < _scalar_int_end():
        # torch's Scalar holds an int64 ("Overflow when unpacking long", any
        # dtype), or in torch 2 a uint64 too
        held = "int64" if _scalar_int_end() == 2**63 else "int64 or uint64"
        raise _tj.SignatureError(f"tensorjit: {what}={alpha!r} does not fit {held}, which "
                                 f"torch reads it as (torch refuses it too)")
    return alpha


def _torch_reads(value: Any, dtype_name: str, what: str, shown: Any = None) -> Any:
    """value as the torch imported beside us reads it in torch.scatter's
    value= for a tensor of that dtype (a one-element scatter_: its check does
    not depend on the size, where a one-element fill converts f16 unchecked
    in torch >= 2.9, 70000.0 to inf), or None without torch or for a dtype
    torch lacks. A value torch refuses is refused, naming input's dtype as
    shown (torch.int64 for a tensor), torch's error the cause."""
    torch = sys.modules.get("torch")
    tdt = getattr(torch, dtype_name, None) if torch is not None else None
    if not isinstance(tdt, getattr(torch, "dtype", ())):
        return None
    value = _python_scalar(value)  # (scatter_ would take a 0-D tensor as src)
    try:
        one = torch.zeros(1, dtype=tdt, device="cpu")
        return one.scatter_(0, torch.zeros(1, dtype=torch.long, device="cpu"), value).item()
    except TypeError as e:
        raise _tj.TypeMismatch(f"tensorjit: {what} must be a real number for input's dtype "
                               f"{shown or dtype_name}, not {type(value).__name__} "
                               f"({value!r})") from e
    except (RuntimeError, OverflowError, ValueError) as e:
        raise _tj.SignatureError(f"tensorjit: {what}={value!r} does not fit input's dtype "
                                 f"{shown or dtype_name} (torch refuses it too)") from e


def _scalar_for(alpha: Any, input: Any, what: str) -> Any:
    """A Python scalar, or a 0-D tensor or array (what names it), as torch
    reads one for input's dtype: for bool, any value is True or False
    (index_add's alpha=False adds nothing; it was refused, the product being
    int64); for an integer type, a float is truncated, and a value the type
    cannot hold is refused, as torch refuses it ('value cannot be converted
    to type uint8_t without overflow': an unsigned type takes an integer in
    [-max, max], a negative one wrapping, as torch's a - b is a + 255 * b in
    uint8, but no negative float); for a float type, a finite value beyond
    the type's largest is refused."""
    alpha = _scalar_value(alpha, what)
    name = _dtype_name(input)
    if name == "bool":
        return bool(alpha)
    if name in _FLOAT_MAX:
        alpha = float(alpha) if isinstance(alpha, numbers.Integral) else alpha
        if math.isfinite(alpha) and abs(alpha) > _FLOAT_MAX[name]:
            raise _tj.SignatureError(f"tensorjit: {what}={alpha!r} does not fit "
                                     f"input's dtype {name}")
        return alpha
    bits = _INT_BITS.get(name)
    if bits is None:  # no dtype the library takes: its refusal names it
        return alpha
    signed = name.startswith("int")
    high = (1 << (bits - 1 if signed else bits)) - 1
    integral = isinstance(alpha, numbers.Integral)
    low = -high - 1 if signed else (-high if integral else 0)
    if not low <= alpha <= high:  # NaN too
        raise _tj.SignatureError(f"tensorjit: {what}={alpha!r} does not fit "
                                 f"input's dtype {name} (torch refuses it too)")
    return int(alpha)  # a float truncated toward zero, as torch does


def _times(source: Any, alpha: Any) -> Any:
    """source * alpha in source's own dtype, as torch computes it: a Python
    scalar keeps a tensor's dtype (integers wrap, bool stays bool, alpha is
    rounded to f16 for an f16 tensor), where numpy would widen uint8 * -1
    to int16 (refused then as a dtype mismatch). A float tensor is multiplied
    by alpha as a 0-D tensor of its dtype: torch 2 multiplies f16 and bf16
    by a Python scalar in f32 (alpha unrounded), torch 1.13 by alpha rounded
    to the dtype, as numpy and the reference do; this keeps 1.13's product
    with any torch."""
    if hasattr(source, "mul"):  # a torch tensor
        if source.is_floating_point():
            import torch
            return source.mul(torch.tensor(alpha, dtype=source.dtype, device=source.device))
        return source.mul(alpha)
    import numpy as np
    a = np.asarray(source)
    if a.dtype.kind in "iub":
        return np.multiply(a, np.array(alpha).astype(a.dtype))  # -1 as uint8's 255: it wraps
    with np.errstate(invalid="ignore", over="ignore"):  # inf * 0 is NaN in torch too, unsaid
        return a * a.dtype.type(alpha)


def _index_add_shapes(input: Any, dim: int, index: Any, source: Any) -> None:
    """torch's rules, checked before the library's op (a ScatterNDUpdate on
    dim 0, a ScatterElementsUpdate elsewhere) would word them its own way
    or, for a source smaller than input, take it."""
    if _rank(index) > 1:
        raise _tj.SignatureError(f"tensorjit: index_add's index must be 1-D or 0-D, not of "
                                 f"shape {tuple(_shape(index))}")
    want = list(_shape(input))
    if want:
        want[dim] = int(__import__("math").prod(_shape(index)))
    if tuple(_shape(source)) != tuple(want):
        raise _tj.SignatureError(f"tensorjit: index_add's source has shape "
                                 f"{tuple(_shape(source))}; it must be input's with dim {dim} "
                                 f"as long as index: {tuple(want)}")


def _filled(input: Any, index: Any, value: Any, name: str) -> Any:
    """Scatter's value (or scalar src, name says which) as a tensor or array
    of index's shape and input's dtype; a value that dtype cannot hold (NaN
    or 300 into an integer type, 2**70, a string) the package's error naming
    it, torch's (or numpy's) as the cause."""
    try:
        if hasattr(input, "new_full"):  # as torch.scatter reads value, whatever its size
            read = _torch_reads(value, _dtype_name(input), f"scatter's {name}", input.dtype)
            return input.new_full(_shape(index), value if read is None else read)
        import numpy as np
        # torch's reading of the scalar for a numpy input as for a tensor:
        # the torch beside us asked, else its rules as torch 1.13 has them (a
        # negative int into an unsigned type wraps, -255 is uint8's 1, as an
        # int64's cast does: numpy 2's full refuses such a Python int)
        dtype = np.asarray(input).dtype
        read = _torch_reads(value, str(dtype), f"scatter's {name}")
        if read is None:
            read = _scalar_for(value, input, f"scatter's {name}")
            if type(read) is int and dtype.kind in "iu":
                read = np.array(read, np.uint64 if read >= 2**63 else np.int64).astype(dtype)
        return np.full(_shape(index), read, dtype=dtype)
    except _tj.Error:  # _scalar_for's, which names it already (a subclass of those below)
        raise
    except (TypeError, ValueError, OverflowError, RuntimeError) as e:
        msg = (f"tensorjit: scatter's {name} {value!r} is no value of input's dtype "
               f"{getattr(input, 'dtype', None)}: {e}")
        raise (_tj.TypeMismatch(msg) if isinstance(e, TypeError) else
               _tj.SignatureError(msg)) from e


def _no_updates(input: Any, index: Any, src: Any) -> Tuple[Any, Any]:
    """index and src as they are; but for an index with no elements, of a
    shape the library's rules refuse (another rank, dims beyond input's or
    src's; torch 1.13 checks none of them then), empty ones of input's rank
    (src's dtype kept, for the library to check), so that the call copies
    input (or leaves out=input as it is) as torch's does."""
    rank = _rank(input)
    if not _no_elements(index) or rank == 0:
        return index, src
    if _rank(index) == rank and _rank(src) == rank and all(
            i <= n and i <= m for i, n, m in zip(_shape(index), _shape(input), _shape(src))):
        return index, src
    return _empty_of_rank(index, rank), _empty_of_rank(src, rank)


def scatter(input: Any, dim: int, index: Any, src: Any = None, *, value: Any = None,
            reduce: Optional[str] = None, out: Optional[Any] = None) -> Any:
    """torch.scatter: a copy of input where out[i... with dim's coordinate
    replaced by index[i...]] = src[i...] (or value); src may be larger than
    index (only the elements at index's positions are read). reduce "add"
    or "multiply" combines instead of replacing."""
    plain = None if value is not None or reduce is not None else _plain_dim(dim, input, index, src)
    if plain is not None:
        try:
            return _tj.scatter_elements_update(input, index, src, plain, "none", torch_dims=True,
                                               out=out)
        except _tj.Error as e:
            raise _renamed_for(e, index, _INDEX_NAMES) from None
    src, index = _array(src), _empty_index(_array(index))
    dim = _dim(dim, _rank(input))
    if _scalars(input, index, *([src] if hasattr(src, "shape") else [])) or (
            _rank(input) == 0 and _no_elements(index)):
        return _shaped(scatter(_vector(input), dim, _vector(index), _vector(src), value=value,
                               reduce=reduce, out=_vector(out)), out, _shape(input))
    if src is None:
        if value is None:
            raise _tj.SignatureError("tensorjit: scatter takes src or value")
        src = _filled(input, index, value, "value")
    elif value is not None:  # torch 1.13: "invalid combination of arguments" (TypeError)
        raise _tj.TypeMismatch("tensorjit: scatter takes src or value, not both")
    elif not hasattr(src, "shape"):
        src = _filled(input, index, src, "src")  # torch.scatter(input, dim, index, 2.0)
    reduction = "none" if reduce is None else _REDUCE.get(reduce)
    if reduction is None or reduce not in (None, "add", "multiply"):
        raise _tj.SignatureError(f"tensorjit: scatter's reduce is 'add' or 'multiply', not "
                                 f"{reduce!r}")
    index, src = _no_updates(input, index, src)
    try:
        return _tj.scatter_elements_update(input, index, src, dim, reduction, torch_dims=True,
                                           out=out)
    except _tj.Error as e:
        raise _renamed_for(e, index, _INDEX_NAMES) from None


def scatter_add(input: Any, dim: int, index: Any, src: Any, *,
                out: Optional[Any] = None) -> Any:
    """torch.scatter_add: scatter with every update added (duplicates all add)."""
    return scatter_reduce(input, dim, index, src, "sum", out=out)


def scatter_reduce(input: Any, dim: int, index: Any, src: Any, reduce: str, *,
                   include_self: bool = True, out: Optional[Any] = None) -> Any:
    """torch.scatter_reduce: a copy of input where every src[i...] is
    combined into out[i... with dim's coordinate replaced by index[i...]] by
    reduce: "sum", "prod", "mean" (integers: the floor of a sum taken in
    int64, which torch takes in input's type and wraps), "amax", "amin".
    include_self=False leaves input's value out of every position some
    update reaches."""
    reduction = _REDUCE.get(reduce) if reduce not in ("add", "multiply") else None
    plain = None if reduction is None else _plain_dim(dim, input, index, src)
    if plain is not None:
        try:
            return _tj.scatter_elements_update(input, index, src, plain, reduction,
                                               use_init_val=include_self, torch_dims=True,
                                               out=out)
        except _tj.Error as e:
            raise _renamed_for(e, index, _INDEX_NAMES) from None
    src, index = _array(src), _empty_index(_array(index))
    dim = _dim(dim, _rank(input))
    if _scalars(input, index, src) or (_rank(input) == 0 and _no_elements(index)):
        return _shaped(scatter_reduce(_vector(input), dim, _vector(index), _vector(src), reduce,
                                      include_self=include_self, out=_vector(out)), out,
                       _shape(input))
    reduction = _REDUCE.get(reduce) if reduce not in ("add", "multiply") else None
    if reduction is None:
        raise _tj.SignatureError(f"tensorjit: unknown reduce {reduce!r} (sum, prod, mean, "
                                 "amax, amin)")
    index, src = _no_updates(input, index, src)
    try:
        return _tj.scatter_elements_update(input, index, src, dim, reduction,
                                           use_init_val=include_self, torch_dims=True, out=out)
    except _tj.Error as e:
        raise _renamed_for(e, index, _INDEX_NAMES) from None


# torch.nn.functional's embeddings (SPEC 10)

_BAG_MODES = ("sum", "mean", "max")


def _no_max_norm(max_norm: Optional[float], name: str) -> None:
    if max_norm is not None:
        raise _tj.SignatureError(f"tensorjit: {name}'s max_norm={max_norm!r} is not supported: "
                                 "torch renormalizes the table's rows in place, which a "
                                 "read-only kernel does not do (renormalize weight first)")


_I32_MIN, _I32_MAX = -2**31, 2**31 - 1
_NARROW = ("int8", "uint8", "int16")  # 1-D input types torch 1.13 takes beside offsets
# and bool too there (True is row 1), though not for a 2-D input or embedding
_NARROW_1D = _NARROW + ("bool",)
# the library's names of the bags' inputs, and torch's
_BAG_NAMES = ((r"\bthe number of indices\b", "input's length"),
              (r"\bweights\b", "per_sample_weights"), (r"\btable\b", "weight"),
              (r"\bindices'", "input's"), (r"\bindices\b", "input"))
_EMBEDDING_NAMES = ((r"\bdata\b", "weight"), (r"\bindices'", "input's"),
                    (r"\bindices\b", "input"))


def _index_types_agree(input: Any, offsets: Any) -> Tuple[Any, Any]:
    """input and offsets of one index type, as torch allows int32 and int64
    mixed: offsets cast to input's type, unless int64 offsets hold a value
    int32 cannot (the cast would wrap it into some other offset and read
    other bags: a user's trial), where input is widened instead, so that
    the library's check names the offset as given. Other dtypes pass as
    they are, for the library to name."""
    if getattr(input, "dtype", None) is getattr(offsets, "dtype", 0):
        return input, offsets  # the usual call: a tensor's or an array's dtype, one object
    torch_pair = hasattr(offsets, "to") and hasattr(input, "new_empty")
    if not torch_pair:
        import numpy as np
        input, offsets = np.asarray(input), np.asarray(offsets)
        if input.size == 0 and input.dtype.kind == "f":  # [] read as numpy reads it
            input = input.astype(offsets.dtype if offsets.dtype.kind in "iu" else np.int64)
    ki, ko = str(input.dtype).replace("torch.", ""), str(offsets.dtype).replace("torch.", "")
    if input.dtype == offsets.dtype:
        return input, offsets
    if ki in _NARROW_1D and ko in ("int32", "int64"):  # torch takes uint8 and int16 input
        return (input.to(offsets.dtype) if torch_pair else input.astype(offsets.dtype)), offsets
    if ko in _NARROW_1D and ki in ("int32", "int64"):  # and offsets, beside a wide input
        return input, (offsets.to(input.dtype) if torch_pair else offsets.astype(input.dtype))
    if {ki, ko} != {"int32", "int64"}:
        return input, offsets
    wide = str(offsets.dtype).endswith("int64")
    count = offsets.numel() if torch_pair else offsets.size
    if wide and count and (int(offsets.min()) < _I32_MIN or int(offsets.max()) > _I32_MAX):
        return (input.to(offsets.dtype) if torch_pair else input.astype(offsets.dtype)), offsets
    return input, (offsets.to(input.dtype) if torch_pair else offsets.astype(input.dtype))


_EVERY_ROW_A_BAG: List[bool] = []


def _every_row_a_bag() -> bool:
    """Whether every row of a 2-D input is a bag under include_last_offset,
    as in torch >= 2.10 (pytorch#167974: the flag no longer changes a 2-D
    input's bags), or the last row is none, as in torch before it. Asked
    once of the torch imported beside us (a sum over two rows of one lookup,
    which torch 1.13 computes without harm); without torch, the fixed rule."""
    if _EVERY_ROW_A_BAG:
        return _EVERY_ROW_A_BAG[0]
    torch = sys.modules.get("torch")
    if torch is None:
        return True
    try:
        two = torch.zeros((2, 1), dtype=torch.long, device="cpu")
        rows = torch.nn.functional.embedding_bag(two, torch.ones((1, 1), device="cpu"),
                                                 mode="sum", include_last_offset=True)
        every = rows.shape[0] == 2
    except (RuntimeError, ValueError, TypeError, AttributeError):
        every = True
    _EVERY_ROW_A_BAG.append(every)
    return every


def embedding_bag(input: Any, weight: Any, offsets: Optional[Any] = None,
                  max_norm: Optional[float] = None, norm_type: float = 2.0,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Optional[Any] = None, include_last_offset: bool = False,
                  padding_idx: Optional[int] = None) -> Any:
    """torch.nn.functional.embedding_bag: out[b] = mode ("sum", "mean" or
    "max") over the rows of weight that bag b's indices name. input 1-D
    with offsets (bag b holds input[offsets[b]:offsets[b+1]], the last to
    the end, or to offsets' last entry with include_last_offset; offsets[0]
    must be 0 and offsets are cast to input's type), or 2-D without
    (each row a bag; with include_last_offset and a torch before 2.10
    imported, that torch's rule: the last row no bag). weight may have
    any rank >= 1 (rows of shape weight.shape[1:]; torch takes 2-D only).
    per_sample_weights (mode "sum" only) scales each lookup; a lookup of
    row padding_idx (in [-E, E)) adds nothing and is not counted by
    "mean"; an empty bag, or one of padding only, gives
    zeros. SPEC 10's arithmetic: f16 and bf16 (which torch 1.13 refuses)
    accumulate in f32 and round once; products are rounded before they are
    added (torch fuses them: a few ulps apart); "max" propagates NaN.
    max_norm is refused (it rewrites weight); norm_type, scale_grad_by_freq
    and sparse only concern gradients. An index outside [0, E) or a bad
    offset raises IndexOutOfRange naming its position; nothing is written.
    """
    _no_max_norm(max_norm, "embedding_bag")
    if mode not in _BAG_MODES:
        raise _tj.SignatureError(f"tensorjit: embedding_bag's mode is 'sum', 'mean' or 'max', "
                                 f"not {mode!r}")
    if mode == "max" and (sparse or scale_grad_by_freq):  # torch's ValueError
        flag = "sparse=True" if sparse else "scale_grad_by_freq=True"
        raise _tj.SignatureError(f"tensorjit: embedding_bag's mode='max' does not take "
                                 f"{flag} (torch refuses it: max has no such gradient)")
    if padding_idx is not None:
        padding_idx = _as_int(padding_idx, "padding_idx")
    try:
        return _embedding_bag(input, weight, offsets, mode, per_sample_weights,
                              include_last_offset, padding_idx)
    except _tj.Error as e:
        raise _renamed(e, _BAG_NAMES) from None


def _embedding_bag(input: Any, weight: Any, offsets: Any, mode: str, per_sample_weights: Any,
                   include_last_offset: bool, padding_idx: Optional[int]) -> Any:
    if per_sample_weights is not None and mode != "sum":
        raise _tj.SignatureError(f"tensorjit: embedding_bag takes per_sample_weights with "
                                 f"mode='sum' only (got mode={mode!r})")
    rank = _rank(input)
    if rank == 2:
        if _dtype_name(input) in _NARROW:  # an extension: torch refuses them for a 2-D input
            input = input.long() if hasattr(input, "long") else input.astype("int64")
        if offsets is not None:
            raise _tj.SignatureError("tensorjit: embedding_bag: a 2-D input is one bag per "
                                     "row and takes no offsets (offsets must be None)")
        if include_last_offset and not _every_row_a_bag():
            # torch before 2.10 reads a 2-D input as offsets 0, L, 2L, ...
            # and then takes the last of them as the end of the bag before:
            # no bag of its own (python/README.md)
            if _shape(input)[0] == 0:
                raise _tj.SignatureError("tensorjit: embedding_bag: include_last_offset needs "
                                         "at least one row of input")
            if per_sample_weights is not None:
                if _shape(per_sample_weights) != _shape(input):  # named as given, uncut
                    raise _tj.SignatureError(
                        f"tensorjit: per_sample_weights has shape "
                        f"{tuple(_shape(per_sample_weights))}; it must have the input's shape "
                        f"{tuple(_shape(input))} (one weight per lookup)")
                per_sample_weights = per_sample_weights[:-1]
            input = input[:-1]
        return _tj.embedding_bag_packed(weight, input, weights=per_sample_weights,
                                        reduction=mode, padding_idx=padding_idx)
    if rank != 1:
        raise _tj.SignatureError(f"tensorjit: embedding_bag's input must be 1-D (with offsets) "
                                 f"or 2-D, not of rank {rank}")
    if offsets is None:
        raise _tj.SignatureError("tensorjit: embedding_bag: a 1-D input needs offsets (the "
                                 "start of each bag)")
    input, offsets = _index_types_agree(input, offsets)
    return _tj.embedding_bag_offsets(weight, input, offsets, weights=per_sample_weights,
                                     reduction=mode, include_last_offset=include_last_offset,
                                     padding_idx=padding_idx, offsets_from_zero=True)


def embedding(input: Any, weight: Any, padding_idx: Optional[int] = None,
              max_norm: Optional[float] = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Any:
    """torch.nn.functional.embedding: the rows of weight that input (any
    shape, of any integer dtype: torch takes int32 and int64 only) names,
    of shape input.shape + weight.shape[1:] (a Gather along dim 0; weight
    of any rank >= 1, where torch takes 2-D only). padding_idx (in [-E, E)) only concerns
    gradients: its row comes back as it is, as torch's does. max_norm is
    refused (it rewrites weight). An index outside [0, E) raises
    IndexOutOfRange naming its position."""
    _no_max_norm(max_norm, "embedding")
    if padding_idx is not None:
        padding_idx = _as_int(padding_idx, "padding_idx")
        rows = _shape(weight)[0] if _shape(weight) else 0
        if not -rows <= padding_idx < rows:
            raise _tj.SignatureError(f"tensorjit: embedding's padding_idx={padding_idx} must "
                                     f"be in [-{rows}, {rows}) (weight has {rows} rows)")
    try:
        return _tj.gather(weight, input, 0, index_policy="error")
    except _tj.Error as e:
        raise _renamed(e, _EMBEDDING_NAMES) from None
