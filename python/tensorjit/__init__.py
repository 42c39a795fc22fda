"""tensorjit: shape-specialized GatherND and ScatterUpdate kernels for numpy.

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
    "library_version", "shutdown",
]


class _Op:
    """One op of the library: its signature structure, entry points and kernel ABI."""

    def __init__(self, name, sig, prefix, fn_type):
        self.name = name
        self.sig = sig
        self.compile = prefix + "_compile"
        self.output_shape = prefix + "_output_shape"
        self.info = prefix + "_info"
        self.fn_type = fn_type


_GATHER_ND = _Op("GatherND", _lib.GatherNDSig, "jit_gather_nd", _lib.GatherFn)
_SCATTER_UPDATE = _Op("ScatterUpdate", _lib.ScatterUpdateSig, "jit_scatter_update",
                      _lib.ScatterFn)


class _Kernel:
    __slots__ = ("op", "address", "fn", "out_shape")

    def __init__(self, op, address, fn, out_shape):
        self.op = op
        self.address = address
        self.fn = fn
        self.out_shape = out_shape


# signature key (a tuple of the op, shapes, type codes and attributes) -> _Kernel
_kernels = {}
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
                         "(error, negative-wraps, clamp, zero-fill)")
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


def _kernel(op, key, fill):
    """The cached kernel of a signature; on a miss, fill(sig) sets its fields
    and the library compiles it."""
    k = _kernels.get(key)
    if k is not None:
        return k
    lib = _lib.load()
    sig = op.sig()
    fill(sig)
    address = getattr(lib, op.compile)(ctypes.byref(sig))
    if not address:
        raise ValueError(_last_error(lib))
    shape = _lib.Shape()
    if getattr(lib, op.output_shape)(ctypes.byref(sig), ctypes.byref(shape)) != 0:
        raise ValueError(_last_error(lib))
    k = _Kernel(op, address, op.fn_type(address), tuple(shape.dims[:shape.rank]))
    _kernels[key] = k
    return k


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
    if getattr(lib, kernel.op.info)(kernel.address, ctypes.byref(info)) != 0:
        raise RuntimeError(f"tensorjit: {_last_error(lib)}")
    return {
        "engine": lib.jit_engine_name(info.engine).decode(),
        "why": (info.why or b"").decode(errors="replace"),
        "compile_ms": info.compile_ms,
        "code_bytes": info.code_bytes,
        "out_bytes": info.out_bytes,
        "cache_hit": bool(info.cache_hit),
    }


# GatherND

def _gather_nd_kernel(data, indices, batch_dims, opset, index_policy):
    batch_dims = _int(batch_dims, "batch_dims", 32)
    opset = _int(opset, "opset", 32)
    dtype = _type_code(data.dtype, "data")
    itype = _type_code(indices.dtype, "indices", index=True)
    policy = _policy_code(index_policy)
    key = ("gather_nd", data.shape, dtype, indices.shape, itype, batch_dims, opset, policy)

    def fill(sig):
        sig.opset = opset
        sig.batch_dims = batch_dims
        sig.dtype = dtype
        sig.index_type = itype
        sig.index_policy = policy
        sig.data_shape = _shape(data.shape, "data")
        sig.indices_shape = _shape(indices.shape, "indices")

    return _kernel(_GATHER_ND, key, fill)


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
    _check_status(kernel.fn(data.ctypes.data, indices.ctypes.data, result.ctypes.data))
    return result


def gather_nd_info(data, indices, batch_dims=0, *, opset=8, index_policy="error"):
    """What serves gather_nd for these arrays' signature: a dict with engine
    ("jit" or "reference"), why (the reason when the reference kernel
    serves), compile_ms, code_bytes, out_bytes and cache_hit."""
    data = np.asarray(data)
    indices = np.asarray(indices)
    return _info(_gather_nd_kernel(data, indices, batch_dims, opset, index_policy))


# ScatterUpdate

def _scatter_update_kernel(data, indices, updates, axis, index_policy):
    axis = _int(axis, "axis", 64)
    dtype = _type_code(data.dtype, "data")
    utype = _type_code(updates.dtype, "updates")
    itype = _type_code(indices.dtype, "indices", index=True)
    policy = _policy_code(index_policy)
    key = ("scatter_update", data.shape, dtype, indices.shape, itype, updates.shape, utype,
           axis, policy)

    def fill(sig):
        sig.axis = axis
        sig.dtype = dtype
        sig.updates_dtype = utype
        sig.index_type = itype
        sig.index_policy = policy
        sig.data_shape = _shape(data.shape, "data")
        sig.indices_shape = _shape(indices.shape, "indices")
        sig.updates_shape = _shape(updates.shape, "updates")

    return _kernel(_SCATTER_UPDATE, key, fill)


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
    _check_status(kernel.fn(data.ctypes.data, indices.ctypes.data, updates.ctypes.data,
                            result.ctypes.data))
    return result


def scatter_update_info(data, indices, updates, axis, *, index_policy="error"):
    """What serves scatter_update for these arrays' signature (see gather_nd_info)."""
    data = np.asarray(data)
    indices = np.asarray(indices)
    updates = np.asarray(updates)
    return _info(_scatter_update_kernel(data, indices, updates, axis, index_policy))


# The rest of the indexing family (SPEC.md section 5): the C library does not
# have them yet. Each will be an _Op, a key and a fill function as above.

def _not_yet(op, entry):
    raise NotImplementedError(f"tensorjit.{op}: the C library has no {entry} yet")


def gather(data, indices, axis=0, batch_dims=0, *, index_policy="error", out=None):
    """Gather (OpenVINO Gather-1/-7/-8, ONNX Gather, numpy take). Not yet."""
    _not_yet("gather", "jit_gather_compile")


def gather_elements(data, indices, axis, *, index_policy="error", out=None):
    """GatherElements (OpenVINO GatherElements-6, torch.gather). Not yet."""
    _not_yet("gather_elements", "jit_gather_elements_compile")


def scatter_nd_update(data, indices, updates, reduction="none", *, index_policy="error",
                      out=None):
    """ScatterNDUpdate (OpenVINO ScatterNDUpdate-3/-15, ONNX ScatterND). Not yet."""
    _not_yet("scatter_nd_update", "jit_scatter_nd_update_compile")


def scatter_elements_update(data, indices, updates, axis, reduction="none",
                            use_init_val=True, *, index_policy="error", out=None):
    """ScatterElementsUpdate (OpenVINO ScatterElementsUpdate-3/-12, torch.scatter). Not yet."""
    _not_yet("scatter_elements_update", "jit_scatter_elements_update_compile")


def library_version():
    """The loaded C library's version (jit_version())."""
    return _lib.load().jit_version().decode()


def shutdown():
    """Frees every kernel (jit_shutdown()) and this module's cache of them. Not
    to be called while another thread uses tensorjit."""
    _kernels.clear()
    _lib.load().jit_shutdown()
