"""tensorjit: shape-specialized indexing kernels for numpy: GatherND, Gather,
GatherElements, ScatterUpdate and ScatterNDUpdate.

A thin ctypes layer over the C library libtensorjit.so.0: it turns numpy
arrays into a signature, asks the library for the kernel of that signature
(cached here per signature), and calls it. Every rule of a signature is the
library's: an invalid one raises ValueError with the library's message, an
index out of range under the index policy raises IndexError with the
library's message (nothing is written), any other kernel status RuntimeError.

The library is found through TENSORJIT_LIBRARY (a path), TENSORJIT_PREFIX (an
install prefix), or the dynamic loader (LD_LIBRARY_PATH, ld.so.cache).
"""

import ctypes
import operator

import numpy as np

from . import _lib

__version__ = "0.1.0"

__all__ = [
    "gather_nd", "scatter_update", "gather_nd_info", "scatter_update_info",
    "gather", "gather_elements", "scatter_nd_update", "scatter_elements_update",
    "gather_info", "compile_dynamic", "DynamicKernel",
    "library_version", "shutdown",
]


class _Op:
    """One op of the library: its jit_op code and kernel ABI. Every op goes
    through the generic API (jit_sig, jit_compile, jit_output_shape,
    jit_info), so that they all share one code path here."""

    def __init__(self, name, code, has_updates):
        self.name = name
        self.code = code
        self.has_updates = has_updates
        self.fn_type = _lib.ScatterFn if has_updates else _lib.GatherFn


_GATHER_ND = _Op("GatherND", _lib.JIT_OP_GATHER_ND, False)
_SCATTER_UPDATE = _Op("ScatterUpdate", _lib.JIT_OP_SCATTER_UPDATE, True)
_GATHER = _Op("Gather", _lib.JIT_OP_GATHER, False)
_GATHER_ELEMENTS = _Op("GatherElements", _lib.JIT_OP_GATHER_ELEMENTS, False)
_SCATTER_ND_UPDATE = _Op("ScatterNDUpdate", _lib.JIT_OP_SCATTER_ND_UPDATE, True)
_SCATTER_ELEMENTS_UPDATE = _Op("ScatterElementsUpdate", _lib.JIT_OP_SCATTER_ELEMENTS_UPDATE,
                               True)


class _Kernel:
    __slots__ = ("op", "address", "fn", "out_shape")

    def __init__(self, op, address, fn, out_shape):
        self.op = op
        self.address = address
        self.fn = fn
        self.out_shape = out_shape


# signature key (a tuple of the op, shapes, type codes and attributes) -> _Kernel,
# all compiled in the library's epoch _kernels_epoch (jit_epoch(): a
# jit_shutdown() by anyone in the process frees them, and a later kernel may
# get the same address)
_kernels = {}
_kernels_epoch = [0]
_type_codes = {}
_policy_codes = {}

# numpy (kind, itemsize) -> the library's type name (jit_dtype_from_name)
_TYPE_NAMES = {
    ("b", 1): "bool",
    ("i", 1): "i8", ("i", 2): "i16", ("i", 4): "i32", ("i", 8): "i64",
    ("u", 1): "u8", ("u", 2): "u16", ("u", 4): "u32", ("u", 8): "u64",
    ("f", 2): "f16", ("f", 4): "f32", ("f", 8): "f64",
}


def _last_error(lib):
    return (lib.jit_last_error() or b"").decode(errors="replace")


def _type_code(dtype, what, index=False):
    """The library's jit_dtype for a numpy dtype (TypeError if it has none)."""
    key = (dtype.kind, dtype.itemsize, dtype.name, index)
    code = _type_codes.get(key)
    if code is not None:
        return code
    name = "bf16" if dtype.name == "bfloat16" else _TYPE_NAMES.get((dtype.kind, dtype.itemsize))
    if index and dtype.kind not in "iu":
        name = None
    if name is None:
        kinds = "an integer dtype" if index else "bool, an integer or a float dtype"
        raise TypeError(f"tensorjit: {what} has dtype {dtype}; it must be {kinds}")
    code = _lib.load().jit_dtype_from_name(name.encode())
    if code == 0:  # JIT_DTYPE_UNSET: the library does not know the name
        raise TypeError(f"tensorjit: {what} has dtype {dtype}, which the library does not know")
    _type_codes[key] = code
    return code


def _policy_code(policy):
    code = _policy_codes.get(policy)
    if code is not None:
        return code
    if not isinstance(policy, str):
        raise TypeError(f"tensorjit: index_policy must be a string, not {type(policy).__name__}")
    c = ctypes.c_int()
    if _lib.load().jit_index_policy_from_name(policy.encode(), ctypes.byref(c)) != 0:
        raise ValueError(f"tensorjit: unknown index_policy {policy!r} "
                         "(error, negative-wraps, clamp, zero-fill, "
                         "negative-wraps-zero-fill)")
    _policy_codes[policy] = c.value
    return c.value


def _int(value, what, bits):
    v = operator.index(value)
    if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
        raise ValueError(f"tensorjit: {what} = {v} does not fit the signature's int{bits}")
    return v


def _shape(dims, what):
    if len(dims) > _lib.JIT_MAX_RANK:
        raise ValueError(f"tensorjit: {what} has rank {len(dims)}, above the library's "
                         f"maximum of {_lib.JIT_MAX_RANK}")
    s = _lib.Shape()
    s.rank = len(dims)
    for i, d in enumerate(dims):
        s.dims[i] = d
    return s


def _array(a):
    """a as an ndarray the kernel can read: C-contiguous, native byte order
    (copied once if it is not)."""
    a = np.asarray(a)
    if not a.dtype.isnative:
        return a.astype(a.dtype.newbyteorder("="), order="C")
    if not a.flags.c_contiguous:
        return a.copy(order="C")
    return a


def _reduction_code(reduction):
    """The library's code of a reduction name (ONNX's add and mul too)."""
    if not isinstance(reduction, str):
        raise ValueError(f"tensorjit: reduction must be a name, got {reduction!r}")
    code = ctypes.c_int()
    if _lib.load().jit_reduction_from_name(reduction.encode(), ctypes.byref(code)) != 0:
        raise ValueError(f"tensorjit: unknown reduction {reduction!r} "
                         "(none, sum, sub, prod, min, max, mean; add, mul)")
    return code.value


def _kernel(op, data, indices, updates=None, *, opset=0, axis=0, batch_dims=0,
            index_policy="error", reduction="none", use_init_val=True):
    """The cached kernel of the signature these arrays and attributes make
    (a jit_sig); on a miss the library checks and compiles it (ValueError
    with the library's message for an invalid one)."""
    opset = _int(opset, "opset", 32)
    axis = _int(axis, "axis", 64)
    batch_dims = _int(batch_dims, "batch_dims", 32)
    dtype = _type_code(data.dtype, "data")
    itype = _type_code(indices.dtype, "indices", index=True)
    utype = _type_code(updates.dtype, "updates") if updates is not None else 0
    policy = _policy_code(index_policy)
    reduce = _reduction_code(reduction)
    no_init_val = 0 if use_init_val else 1
    key = (op.code, data.shape, dtype, indices.shape, itype,
           None if updates is None else updates.shape, utype, opset, axis, batch_dims, policy,
           reduce, no_init_val)
    lib = _lib.load()
    epoch = lib.jit_epoch()
    if epoch != _kernels_epoch[0]:
        _kernels.clear()
        _kernels_epoch[0] = epoch
    k = _kernels.get(key)
    if k is not None:
        return k
    sig = _lib.Sig()
    sig.op = op.code
    sig.opset = opset
    sig.axis = axis
    sig.batch_dims = batch_dims
    sig.dtype = dtype
    sig.updates_dtype = utype
    sig.index_type = itype
    sig.index_policy = policy
    sig.reduction = reduce
    sig.no_init_val = no_init_val
    sig.data_shape = _shape(data.shape, "data")
    sig.indices_shape = _shape(indices.shape, "indices")
    if updates is not None:
        sig.updates_shape = _shape(updates.shape, "updates")
    address = lib.jit_compile(ctypes.byref(sig))
    if not address:
        raise ValueError(_last_error(lib))
    shape = _lib.Shape()
    if lib.jit_output_shape(ctypes.byref(sig), ctypes.byref(shape)) != 0:
        raise ValueError(_last_error(lib))
    k = _Kernel(op, address, op.fn_type(address), tuple(shape.dims[:shape.rank]))
    _kernels[key] = k
    return k


def _run(kernel, data, indices, updates, out):
    """Calls the kernel with its op's arguments; IndexError on a bad index."""
    if kernel.op.has_updates:
        status = kernel.fn(data.ctypes.data, indices.ctypes.data, updates.ctypes.data,
                           out.ctypes.data)
    else:
        status = kernel.fn(data.ctypes.data, indices.ctypes.data, out.ctypes.data)
    _check_status(status)
    return out


def _check_status(status):
    if status == _lib.JIT_OK:
        return
    message = _last_error(_lib.load())
    if status == _lib.JIT_STATUS_BAD_INDEX:
        raise IndexError(message)
    raise RuntimeError(f"tensorjit: the kernel returned status {status}: {message}")


def _output(out, kernel, dtype, inputs, in_place=False):
    """out, checked (ValueError), or a new array of the output's shape."""
    if out is None:
        return np.empty(kernel.out_shape, dtype)
    if not isinstance(out, np.ndarray):
        raise ValueError(f"tensorjit: out must be a numpy array, not {type(out).__name__}")
    if out.shape != kernel.out_shape:
        raise ValueError(f"tensorjit: out has shape {out.shape}; the output's is "
                         f"{kernel.out_shape}")
    if out.dtype != dtype:
        raise ValueError(f"tensorjit: out has dtype {out.dtype}; the output's is {dtype}")
    if not out.flags.c_contiguous:
        raise ValueError("tensorjit: out must be C-contiguous")
    if not out.flags.writeable:
        raise ValueError("tensorjit: out is read-only")
    for name, a in inputs:
        if in_place and name == "data" and out.ctypes.data == a.ctypes.data:
            continue  # a scatter in place: out is data's very buffer (same shape, dtype)
        if np.may_share_memory(out, a):
            raise ValueError(f"tensorjit: out overlaps {name}"
                             + (" (only out=data, the whole array, runs in place)"
                                if in_place else ""))
    return out


def _info(kernel):
    lib = _lib.load()
    info = _lib.KernelInfo()
    if lib.jit_info(kernel.address, ctypes.byref(info)) != 0:
        raise RuntimeError(f"tensorjit: {_last_error(lib)}")
    return {
        "engine": lib.jit_engine_name(info.engine).decode(),
        "why": (info.why or b"").decode(errors="replace"),
        "compile_ms": info.compile_ms,
        "code_bytes": info.code_bytes,
        "out_bytes": info.out_bytes,
        "cache_hit": bool(info.cache_hit),
        "dynamic": bool(info.dynamic),
    }


# GatherND

def _gather_nd_kernel(data, indices, batch_dims, opset, index_policy):
    return _kernel(_GATHER_ND, data, indices, opset=opset, batch_dims=batch_dims,
                   index_policy=index_policy)


def gather_nd(data, indices, batch_dims=0, *, opset=8, index_policy="error", out=None):
    """GatherND (OpenVINO GatherND-5/-8, ONNX GatherND, tf.gather_nd).

    out[b..., j..., rest...] = data[b..., indices[b..., j..., :], rest...] over the
    first batch_dims dims. opset 5 or 8 (only the output shape differs: opset 5
    merges the batch dims into one). index_policy: "error", "negative-wraps",
    "clamp" or "zero-fill". Returns out (a new array unless out= is given).
    """
    data = _array(data)
    indices = _array(indices)
    kernel = _gather_nd_kernel(data, indices, batch_dims, opset, index_policy)
    result = _output(out, kernel, data.dtype, (("data", data), ("indices", indices)))
    return _run(kernel, data, indices, None, result)


def gather_nd_info(data, indices, batch_dims=0, *, opset=8, index_policy="error"):
    """What serves gather_nd for these arrays' signature: a dict with engine
    ("jit" or "reference"), why (the reason when the reference kernel
    serves), compile_ms, code_bytes, out_bytes and cache_hit."""
    data = np.asarray(data)
    indices = np.asarray(indices)
    return _info(_gather_nd_kernel(data, indices, batch_dims, opset, index_policy))


# ScatterUpdate

def _scatter_update_kernel(data, indices, updates, axis, index_policy):
    return _kernel(_SCATTER_UPDATE, data, indices, updates, axis=axis,
                   index_policy=index_policy)


def scatter_update(data, indices, updates, axis, *, index_policy="error", out=None):
    """ScatterUpdate-3: a copy of data whose slices along axis selected by
    indices are replaced by updates (of shape data.shape[:axis] + indices.shape
    + data.shape[axis+1:]); of duplicate indices the last one in row-major
    order wins. out=data runs in place; on a bad index nothing is written.
    Returns out (a new array unless out= is given).
    """
    data = _array(data)
    indices = _array(indices)
    updates = _array(updates)
    kernel = _scatter_update_kernel(data, indices, updates, axis, index_policy)
    result = _output(out, kernel, data.dtype,
                     (("data", data), ("indices", indices), ("updates", updates)),
                     in_place=True)
    return _run(kernel, data, indices, updates, result)


def scatter_update_info(data, indices, updates, axis, *, index_policy="error"):
    """What serves scatter_update for these arrays' signature (see gather_nd_info)."""
    data = np.asarray(data)
    indices = np.asarray(indices)
    updates = np.asarray(updates)
    return _info(_scatter_update_kernel(data, indices, updates, axis, index_policy))


# Gather

def gather(data, indices, axis=0, batch_dims=0, *, opset=8, index_policy="negative-wraps",
           out=None):
    """Gather (OpenVINO Gather-1/-7/-8, ONNX Gather, tf.gather, numpy take).

    out[p..., i_b..., rest...] = data[p..., indices[p[:b]..., i_b...], rest...]
    where p are the positions before axis and b = batch_dims (negative axis
    and batch_dims count from the end); the output's shape is
    data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis+1:].
    opset 1, 7 or 8 (Gather-1 has no batch_dims).

    The default index_policy, "negative-wraps", makes
    tensorjit.gather(d, i, axis) behave like numpy.take(d, i, axis): indices
    in [-s, s) are taken (negative ones count from the end of the axis of size
    s) and any other raises IndexError (nothing is written). OpenVINO
    Gather-8's own semantics (zeros for indices beyond [-s, s)) are
    index_policy="negative-wraps-zero-fill"; "error", "clamp" and
    "zero-fill" are the others. Returns out (a new array unless out= is given).
    """
    data = _array(data)
    indices = _array(indices)
    kernel = _kernel(_GATHER, data, indices, opset=opset, axis=axis, batch_dims=batch_dims,
                     index_policy=index_policy)
    result = _output(out, kernel, data.dtype, (("data", data), ("indices", indices)))
    return _run(kernel, data, indices, None, result)


def gather_info(data, indices, axis=0, batch_dims=0, *, opset=8,
                index_policy="negative-wraps"):
    """What serves gather for these arrays' signature (see gather_nd_info)."""
    return _info(_kernel(_GATHER, np.asarray(data), np.asarray(indices), opset=opset,
                         axis=axis, batch_dims=batch_dims, index_policy=index_policy))


# GatherElements

def gather_elements(data, indices, axis, *, index_policy="error", out=None):
    """GatherElements-6 (ONNX GatherElements, torch.gather,
    numpy.take_along_axis): out[i...] = data[i... with its axis coordinate
    replaced by indices[i...]]. data and indices have the same rank;
    indices.shape[d] <= data.shape[d] for every d but axis; the output has
    indices' shape. The default index_policy, "error", is torch.gather's
    (an index outside [0, s) raises IndexError, nothing written);
    "negative-wraps" also takes negative indices as numpy.take_along_axis
    does. Returns out (a new array unless out= is given).
    """
    data = _array(data)
    indices = _array(indices)
    kernel = _kernel(_GATHER_ELEMENTS, data, indices, axis=axis, index_policy=index_policy)
    result = _output(out, kernel, data.dtype, (("data", data), ("indices", indices)))
    return _run(kernel, data, indices, None, result)


# ScatterNDUpdate

def scatter_nd_update(data, indices, updates, reduction="none", *, opset=None,
                      index_policy="error", out=None):
    """ScatterNDUpdate-3/-15 (ONNX ScatterND, tf.tensor_scatter_nd_update and
    _add/_min/_max): a copy of data where, for each index tuple t =
    indices[j..., :] (k = indices.shape[-1] <= data.ndim), in row-major order
    of j, out[t...] = reduction(out[t...], updates[j...]); updates has shape
    indices.shape[:-1] + data.shape[k:]. reduction: "none" (the last
    duplicate wins), "sum", "sub" (out - update), "prod", "min", "max"
    (ONNX's "add", "mul" too), applied one update after another in the
    element type, so results are the same from run to run. opset defaults
    to 3 for "none", else 15. out=data runs in place; on a bad index
    (IndexError) nothing is written. Returns out (a new array unless out=
    is given).
    """
    if opset is None:
        opset = 3 if reduction == "none" else 15
    data = _array(data)
    indices = _array(indices)
    updates = _array(updates)
    kernel = _kernel(_SCATTER_ND_UPDATE, data, indices, updates, opset=opset,
                     index_policy=index_policy, reduction=reduction)
    result = _output(out, kernel, data.dtype,
                     (("data", data), ("indices", indices), ("updates", updates)),
                     in_place=True)
    return _run(kernel, data, indices, updates, result)


# ScatterElementsUpdate

def scatter_elements_update(data, indices, updates, axis, reduction="none",
                            use_init_val=True, *, opset=12, index_policy="error", out=None):
    """ScatterElementsUpdate-3/-12 (ONNX ScatterElements, torch.scatter and
    scatter_reduce, numpy.put_along_axis): a copy of data where, for every
    element i of updates in row-major order, out[i with its axis coordinate
    replaced by indices[i]] = reduction(that, updates[i]). indices and
    updates have the same shape and data's rank. reduction: "none", "sum",
    "prod", "min", "max", "mean" (integers: floor of the mean); with
    use_init_val=False a position hit by any update ignores data's value
    (torch's include_self=False). out=data runs in place. Returns out.
    """
    data = _array(data)
    indices = _array(indices)
    updates = _array(updates)
    kernel = _kernel(_SCATTER_ELEMENTS_UPDATE, data, indices, updates, opset=opset, axis=axis,
                     index_policy=index_policy, reduction=reduction,
                     use_init_val=use_init_val)
    result = _output(out, kernel, data.dtype,
                     (("data", data), ("indices", indices), ("updates", updates)),
                     in_place=True)
    return _run(kernel, data, indices, updates, result)


# Dynamic kernels (SPEC section 6)

_OPS_BY_CODE = {op.code: op for op in (_GATHER_ND, _SCATTER_UPDATE, _GATHER, _GATHER_ELEMENTS,
                                       _SCATTER_ND_UPDATE, _SCATTER_ELEMENTS_UPDATE)}


def _dynamic_shape(dims, what):
    """A shape whose None or -1 entries are dynamic dims."""
    if dims is None:
        raise ValueError(f"tensorjit: {what} needs a shape (a sequence of ints, None or -1 for a "
                         "dynamic dim)")
    out = []
    for d in dims:
        if d is None:
            out.append(_lib.JIT_DIM_DYNAMIC)
        else:
            v = _int(d, f"a dim of {what}", 64)
            if v < 0 and v != _lib.JIT_DIM_DYNAMIC:
                raise ValueError(f"tensorjit: {what} has dim {v}; a dim is >= 0, or None or -1 "
                                 "(dynamic)")
            out.append(v)
    return _shape(out, what)


def _bounds(bounds, shape, what):
    arr = (ctypes.c_int64 * _lib.JIT_MAX_RANK)()
    if bounds is None:
        return arr
    if len(bounds) != shape.rank:
        raise ValueError(f"tensorjit: {what} has {len(bounds)} entries; {what[:-6]} has rank "
                         f"{shape.rank}")
    for i, b in enumerate(bounds):
        arr[i] = 0 if b is None else _int(b, what, 64)
    return arr


class DynamicKernel:
    """One kernel for every shape of a family: ranks, types and attributes
    fixed, the dims given as None (or -1) known only at call time. Calling
    it with numpy arrays passes their shapes as the actual dims; the library
    checks them against every rule of the op, the bounds and the static
    dims (ValueError with its message, nothing written), and the output is
    allocated from the call's concrete signature (jit_sig_bind,
    jit_output_shape). Made by compile_dynamic()."""

    def __init__(self, op, sig, address, epoch):
        self._op = op
        self._sig = sig
        self._address = address
        self._epoch = epoch
        self._fn = _lib.DynamicFn(address)
        self._dtype = None
        lib = _lib.load()
        shape = _lib.Shape()
        if lib.jit_output_shape(ctypes.byref(sig), ctypes.byref(shape)) != 0:
            # even the output's rank varies (a dynamic tuple length): each
            # call's shape comes from its own dims
            self.output_shape = None
        else:
            self.output_shape = tuple(None if d == _lib.JIT_DIM_DYNAMIC else d
                                      for d in shape.dims[:shape.rank])

    @property
    def op(self):
        """The op's name ("GatherND")."""
        return self._op.name

    def _check_alive(self):
        # After a jit_shutdown() the address may hold another kernel, of
        # another signature: never call it.
        if _lib.load().jit_epoch() != self._epoch:
            raise RuntimeError(f"tensorjit: this {self._op.name} DynamicKernel was freed by "
                               "tensorjit.shutdown() (jit_shutdown); compile it again with "
                               "compile_dynamic")

    def info(self):
        """What serves the kernel (see gather_nd_info); "dynamic" is True."""
        self._check_alive()
        return _info(_Kernel(self._op, self._address, None, None))

    def _dims(self, arrays):
        dims = []
        for a in arrays:
            dims.extend(a.shape)
        return (ctypes.c_int64 * max(len(dims), 1))(*dims)

    def bind(self, data_shape, indices_shape, updates_shape=None):
        """The output shape of one call with inputs of these shapes
        (ValueError when the family has no such shape)."""
        shapes = [tuple(data_shape), tuple(indices_shape)]
        if self._op.has_updates:
            shapes.append(tuple(updates_shape or ()))
        dims = [d for s in shapes for d in s]
        self._check_alive()
        return self._bind((ctypes.c_int64 * max(len(dims), 1))(*dims))

    def _bind(self, dims):
        lib = _lib.load()
        concrete = _lib.Sig()
        shape = _lib.Shape()
        if (lib.jit_sig_bind(ctypes.byref(self._sig), dims, ctypes.byref(concrete)) != 0 or
                lib.jit_output_shape(ctypes.byref(concrete), ctypes.byref(shape)) != 0):
            raise ValueError(_last_error(lib))
        return tuple(shape.dims[:shape.rank])

    def __call__(self, data, indices, updates=None, *, out=None):
        self._check_alive()
        data = _array(data)
        indices = _array(indices)
        arrays = [("data", data), ("indices", indices)]
        if self._op.has_updates:
            if updates is None:
                raise ValueError(f"tensorjit: {self._op.name} takes updates")
            updates = _array(updates)
            arrays.append(("updates", updates))
        for (name, a), code, what in ((arrays[0], self._sig.dtype, "data"),
                                      (arrays[1], self._sig.index_type, "indices")):
            index = what == "indices"
            if _type_code(a.dtype, name, index=index) != code:
                raise TypeError(f"tensorjit: {name} has dtype {a.dtype}, not the kernel's")
        if self._op.has_updates:
            want = self._sig.updates_dtype or self._sig.dtype
            if _type_code(updates.dtype, "updates") != want:
                raise TypeError(f"tensorjit: updates has dtype {updates.dtype}, not the kernel's")
        for name, a in arrays:
            if a.ndim > _lib.JIT_MAX_RANK:
                raise ValueError(f"tensorjit: {name} has rank {a.ndim}")
        ranks = (self._sig.data_shape.rank, self._sig.indices_shape.rank,
                 self._sig.updates_shape.rank)
        for (name, a), rank in zip(arrays, ranks):
            if a.ndim != rank:
                raise ValueError(f"tensorjit: {name} has rank {a.ndim}; the kernel's is {rank}")
        dims = self._dims([a for _, a in arrays])
        shape = self._bind(dims)
        kernel = _Kernel(self._op, self._address, None, shape)
        result = _output(out, kernel, data.dtype, arrays, in_place=self._op.has_updates)
        status = self._fn(data.ctypes.data, indices.ctypes.data,
                          updates.ctypes.data if updates is not None else None,
                          result.ctypes.data, dims)
        if status == _lib.JIT_STATUS_BAD_SHAPE:
            raise ValueError(_last_error(_lib.load()))
        _check_status(status)
        return result


def compile_dynamic(op, data_shape, indices_shape, updates_shape=None, *, dtype, index_dtype,
                    axis=0, batch_dims=0, opset=None, index_policy=None, reduction="none",
                    use_init_val=True, data_bound=None, indices_bound=None,
                    updates_bound=None):
    """The dynamic kernel (a DynamicKernel) of op ("gather_nd", "gather",
    "gather_elements", "scatter_update", "scatter_nd_update",
    "scatter_elements_update", or the op's name "GatherND") for shapes whose
    None (or -1) entries are known only at call time: one kernel for every
    shape of the family, never a compile per shape. *_bound give upper
    bounds of dynamic dims at their positions (None or 0: none). dtype and
    index_dtype: numpy dtypes of data (and updates) and indices.
    index_policy defaults as the op's function here does ("negative-wraps"
    for gather, else "error"). ValueError with the library's message when
    no shape of the family is valid.

        k = tensorjit.compile_dynamic("gather", (None, 64), (None,),
                                      dtype=np.float32, index_dtype=np.int64)
        k(table, ids)   # any number of rows and of ids
    """
    lib = _lib.load()
    if not isinstance(op, str):
        raise TypeError(f"tensorjit: op must be a name, not {type(op).__name__}")
    code = lib.jit_op_from_name(op.replace("_", "-").encode())
    if code not in _OPS_BY_CODE:
        code = lib.jit_op_from_name(op.encode())
    if code not in _OPS_BY_CODE:
        raise ValueError(f"tensorjit: unknown op {op!r}")
    o = _OPS_BY_CODE[code]
    if index_policy is None:
        index_policy = "negative-wraps" if o is _GATHER else "error"
    if opset is None:
        opset = 15 if o is _SCATTER_ND_UPDATE and reduction != "none" else (
            12 if o is _SCATTER_ELEMENTS_UPDATE else 0)
    sig = _lib.Sig()
    sig.op = code
    sig.opset = _int(opset, "opset", 32)
    sig.axis = _int(axis, "axis", 64)
    sig.batch_dims = _int(batch_dims, "batch_dims", 32)
    sig.dtype = _type_code(np.dtype(dtype), "data")
    sig.index_type = _type_code(np.dtype(index_dtype), "indices", index=True)
    sig.index_policy = _policy_code(index_policy)
    sig.reduction = _reduction_code(reduction)
    sig.no_init_val = 0 if use_init_val else 1
    sig.data_shape = _dynamic_shape(data_shape, "data")
    sig.indices_shape = _dynamic_shape(indices_shape, "indices")
    if o.has_updates:
        sig.updates_shape = _dynamic_shape(updates_shape, "updates")
        sig.updates_dtype = sig.dtype
    sig.data_bound = _bounds(data_bound, sig.data_shape, "data_bound")
    sig.indices_bound = _bounds(indices_bound, sig.indices_shape, "indices_bound")
    if o.has_updates:
        sig.updates_bound = _bounds(updates_bound, sig.updates_shape, "updates_bound")
    if not lib.jit_sig_is_dynamic(ctypes.byref(sig)):
        raise ValueError("tensorjit: no dim is dynamic (None or -1): call the op's function "
                         "instead")
    epoch = lib.jit_epoch()
    address = lib.jit_compile(ctypes.byref(sig))
    if not address:
        raise ValueError(_last_error(lib))
    return DynamicKernel(o, sig, address, epoch)


def library_version():
    """The loaded C library's version (jit_version())."""
    return _lib.load().jit_version().decode()


def shutdown():
    """Frees every kernel (jit_shutdown()) and this module's cache of them. Not
    to be called while another thread uses tensorjit. A DynamicKernel made
    before raises RuntimeError when used afterwards."""
    _kernels.clear()
    _lib.load().jit_shutdown()
