"""ctypes declarations of libtensorjit's public API (include/tensorjit.h).

The structures mirror the header field by field; keep them in step with it.
The library is loaded on first use (see load()).
"""

import ctypes
import ctypes.util
import os
import threading

JIT_MAX_RANK = 32

# enum jit_status
JIT_OK = 0
JIT_STATUS_BAD_INDEX = 1
JIT_STATUS_BAD_POINTER = 2
JIT_STATUS_RELEASED = 3
JIT_STATUS_NO_MEMORY = 4
JIT_STATUS_BAD_SHAPE = 5

# a dim known only at call time (a dynamic signature's)
JIT_DIM_DYNAMIC = -1

SONAME = "libtensorjit.so.0"
# The structures below are those of this version of the header; a library of
# another minor version (0.x) may lay them out differently.
ABI_VERSION = (0, 1)

_c_enum = ctypes.c_int


class Shape(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int), ("dims", ctypes.c_int64 * JIT_MAX_RANK)]


class GatherNDSig(ctypes.Structure):
    _fields_ = [
        ("opset", ctypes.c_int),
        ("batch_dims", ctypes.c_int),
        ("dtype", _c_enum),
        ("index_type", _c_enum),
        ("index_policy", _c_enum),
        ("engine", _c_enum),
        ("threads", ctypes.c_int),
        ("data_shape", Shape),
        ("indices_shape", Shape),
    ]


class ScatterUpdateSig(ctypes.Structure):
    _fields_ = [
        ("axis", ctypes.c_int64),
        ("dtype", _c_enum),
        ("updates_dtype", _c_enum),
        ("index_type", _c_enum),
        ("axis_type", _c_enum),
        ("axis_shape", Shape),
        ("index_policy", _c_enum),
        ("engine", _c_enum),
        ("threads", ctypes.c_int),
        ("data_shape", Shape),
        ("indices_shape", Shape),
        ("updates_shape", Shape),
    ]


# enum jit_index_policy
JIT_INDEX_ERROR = 0
JIT_INDEX_NEGATIVE_WRAPS = 1
JIT_INDEX_CLAMP = 2
JIT_INDEX_ZERO_FILL = 3
JIT_INDEX_NEGATIVE_WRAPS_ZERO_FILL = 4

# enum jit_op
JIT_OP_NONE = 0
JIT_OP_GATHER_ND = 1
JIT_OP_SCATTER_UPDATE = 2
JIT_OP_GATHER = 3
JIT_OP_SCATTER_ND_UPDATE = 4
JIT_OP_GATHER_ELEMENTS = 5
JIT_OP_SCATTER_ELEMENTS_UPDATE = 6

# enum jit_op_attr
JIT_ATTR_AXIS = 1
JIT_ATTR_BATCH_DIMS = 2
JIT_ATTR_UPDATES = 4
JIT_ATTR_AXIS_TENSOR = 8


class Sig(ctypes.Structure):
    """jit_sig: one signature for every op (the generic API)."""
    _fields_ = [
        ("op", _c_enum),
        ("opset", ctypes.c_int),
        ("axis", ctypes.c_int64),
        ("batch_dims", ctypes.c_int),
        ("dtype", _c_enum),
        ("updates_dtype", _c_enum),
        ("index_type", _c_enum),
        ("axis_type", _c_enum),
        ("axis_shape", Shape),
        ("index_policy", _c_enum),
        ("engine", _c_enum),
        ("threads", ctypes.c_int),
        ("data_shape", Shape),
        ("indices_shape", Shape),
        ("updates_shape", Shape),
        ("reduction", _c_enum),
        ("no_init_val", ctypes.c_int),
        # upper bounds of dynamic dims at the dim's position, 0: none
        ("data_bound", ctypes.c_int64 * JIT_MAX_RANK),
        ("indices_bound", ctypes.c_int64 * JIT_MAX_RANK),
        ("updates_bound", ctypes.c_int64 * JIT_MAX_RANK),
    ]


class OpInfo(ctypes.Structure):
    """jit_op_info: what an op takes."""
    _fields_ = [
        ("op", _c_enum),
        ("name", ctypes.c_char_p),
        ("command", ctypes.c_char_p),
        ("attrs", ctypes.c_uint),
        ("has_updates", ctypes.c_int),
        ("opsets", ctypes.c_int * 4),
        ("default_opset", ctypes.c_int),
        ("index_types", ctypes.c_uint),
        ("reductions", ctypes.c_uint),
    ]


class KernelInfo(ctypes.Structure):
    _fields_ = [
        ("engine", _c_enum),
        ("why", ctypes.c_char_p),
        ("compile_ms", ctypes.c_double),
        ("code_bytes", ctypes.c_size_t),
        ("out_bytes", ctypes.c_int64),
        ("cache_hit", ctypes.c_int),
        ("op", _c_enum),
        ("dynamic", ctypes.c_int),
    ]


# Kernel ABIs: gathers (data, indices, out), scatters (data, indices, updates, out).
GatherFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
ScatterFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.c_void_p)
# Dynamic kernels: (data, indices, updates, out, dims), dims the actual dims of
# data, indices, then updates (ops with updates).
DynamicFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                             ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64))

_P = ctypes.POINTER
_PROTOTYPES = {
    "jit_version": (ctypes.c_char_p, []),
    "jit_last_error": (ctypes.c_char_p, []),
    "jit_shutdown": (None, []),
    "jit_epoch": (ctypes.c_uint64, []),
    "jit_dtype_from_name": (_c_enum, [ctypes.c_char_p]),
    "jit_dtype_name": (ctypes.c_char_p, [_c_enum]),
    "jit_index_policy_from_name": (ctypes.c_int, [ctypes.c_char_p, _P(_c_enum)]),
    "jit_engine_name": (ctypes.c_char_p, [_c_enum]),
    "jit_compile": (ctypes.c_void_p, [_P(Sig)]),
    "jit_output_shape": (ctypes.c_int, [_P(Sig), _P(Shape)]),
    "jit_info": (ctypes.c_int, [ctypes.c_void_p, _P(KernelInfo)]),
    "jit_op_describe": (ctypes.c_int, [_c_enum, _P(OpInfo)]),
    "jit_op_from_name": (_c_enum, [ctypes.c_char_p]),
    "jit_reduction_from_name": (ctypes.c_int, [ctypes.c_char_p, _P(_c_enum)]),
    "jit_gather_nd_compile": (ctypes.c_void_p, [_P(GatherNDSig)]),
    "jit_gather_nd_output_shape": (ctypes.c_int, [_P(GatherNDSig), _P(Shape)]),
    "jit_gather_nd_info": (ctypes.c_int, [ctypes.c_void_p, _P(KernelInfo)]),
    "jit_scatter_update_compile": (ctypes.c_void_p, [_P(ScatterUpdateSig)]),
    "jit_scatter_update_output_shape": (ctypes.c_int, [_P(ScatterUpdateSig), _P(Shape)]),
    "jit_scatter_update_info": (ctypes.c_int, [ctypes.c_void_p, _P(KernelInfo)]),
    "jit_sig_is_dynamic": (ctypes.c_int, [_P(Sig)]),
    "jit_sig_bind": (ctypes.c_int, [_P(Sig), _P(ctypes.c_int64), _P(Sig)]),
}


def _candidates():
    """Where to look for the library, in order: (description, path or name)."""
    path = os.environ.get("TENSORJIT_LIBRARY")
    if path:
        return [("TENSORJIT_LIBRARY", path)]
    found = []
    prefix = os.environ.get("TENSORJIT_PREFIX")
    if prefix:
        for libdir in ("lib", "lib64", os.path.join("lib", _multiarch())):
            candidate = os.path.join(prefix, libdir, SONAME)
            if os.path.exists(candidate):
                found.append(("TENSORJIT_PREFIX", candidate))
                break
        else:
            found.append(("TENSORJIT_PREFIX", os.path.join(prefix, "lib", SONAME)))
    found.append(("the dynamic loader", SONAME))
    name = ctypes.util.find_library("tensorjit")
    if name and name != SONAME:
        found.append(("ctypes.util.find_library", name))
    return found


def _multiarch():
    try:
        import sysconfig
        return sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
    except Exception:  # pragma: no cover - only on odd builds of Python
        return "x86_64-linux-gnu"


_lock = threading.Lock()
_lib = None


def load():
    """The loaded library, its functions declared. OSError if not found or of
    another ABI version."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        errors = []
        lib = None
        for how, what in _candidates():
            try:
                lib = ctypes.CDLL(what)
                break
            except OSError as e:
                errors.append(f"{how} ({what}): {e}")
        if lib is None:
            raise OSError(
                "tensorjit: cannot load the C library libtensorjit.so.0; install it "
                "(cmake --install) and set TENSORJIT_LIBRARY=/path/to/libtensorjit.so.0, "
                "TENSORJIT_PREFIX=/install/prefix, or LD_LIBRARY_PATH. Tried: "
                + "; ".join(errors))
        for name, (restype, argtypes) in _PROTOTYPES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        version = lib.jit_version().decode()
        if tuple(int(p) for p in version.split(".")[:2]) != ABI_VERSION:
            raise OSError(
                f"tensorjit: the Python package needs libtensorjit "
                f"{ABI_VERSION[0]}.{ABI_VERSION[1]}.x, found {version} "
                f"({getattr(lib, '_name', '?')})")
        _lib = lib
        return lib
