"""numpy's own tests of take, take_along_axis, put_along_axis and ufunc.at
(add, subtract, multiply, maximum, minimum), run with those calls routed to
tensorjit.numpy: the expected values are the ones numpy's developers wrote,
not ones this project produced.

Each numpy test module that exercises them is read from numpy's install
(skipped where the distribution left its tests out), its calls rewritten in
the syntax tree (`np.take(...)`, `x.take(...)`, `ta.take` passed as a
callable, `np.add.at`, `ufunc.at` of those five ufuncs, the names
`take_along_axis` / `put_along_axis`) into a router, and its test functions
that reach such a call run here routed; one that fails is run again
unrouted, and left out where numpy itself fails it here. Nothing is patched
outside the rewritten copies but tensorjit.numpy._numpy_at, wrapped during a
run to count the ufunc.at calls it hands to numpy.

A routed call goes to tensorjit.numpy. Where tensorjit refuses with a
tensorjit.Error a call of a kind its docs leave out (an element type it has no
kernel type for, or a ufunc.at index that is not integers: a slice, None, an
Ellipsis, booleans), the refusal is recorded and numpy's own call decides
what the test sees, its result or its error, so that the rest of the test
still runs through tensorjit. Any other error of tensorjit propagates to the
test (which judges, say, that an IndexError is one). A call tensorjit.numpy
hands to numpy by its own documented rule (an ndarray subclass, an object
overriding numpy; for ufunc.at also a b numpy promotes a's type for, a
possible tie of signed zeros in maximum / minimum, an f16 NaN) is counted
apart.

A test passes through tensorjit when it passes, reached tensorjit and
recorded no refusal; the tests in REFUSED must pass with exactly the listed
kinds of refusal, those in DELEGATED with every routed call handed to numpy;
anything else (a failure, an unlisted refusal) fails this test.
`python3 test_numpy_own_tests.py` prints each numpy test's outcome
(TENSORJIT_OWN_TESTS_TRACE=1: a failure's traceback).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import os
import sys
import traceback
import types
import warnings
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import numpy as np
import pytest

import tensorjit
import tensorjit.numpy as tnp

MODULES = [
    "numpy.core.tests.test_item_selection",
    "numpy.core.tests.test_multiarray",
    "numpy.core.tests.test_ufunc",
    "numpy.core.tests.test_umath",
    "numpy.core.tests.test_regression",
    "numpy.core.tests.test_numeric",
    "numpy.core.tests.test_dtype",
    "numpy.core.tests.test_indexing",
    "numpy.core.tests.test_custom_dtypes",
    "numpy.core.tests.test_mem_overlap",
    "numpy.lib.tests.test_shape_base",
    "numpy.lib.tests.test_arraysetops",
    "numpy.linalg.tests.test_linalg",
    "numpy.ma.tests.test_core",
    "numpy.ma.tests.test_old_ma",
]

# numpy tests (module tail::Class::test, any parameters) that pass only with
# some calls refused, each with the kinds of refusal it must record and why:
# "dtype", an element type tensorjit has no kernel type for (python/README.md,
# "Arrays": bool, integers, f16, bf16, f32, f64); "index", a ufunc.at index
# that is not integers (tensorjit.numpy.add_at's docstring).
REFUSED: Dict[str, Tuple[Set[str], str]] = {
    "test_item_selection::TestTake::test_simple": ({"dtype"}, "object and a structured dtype"),
    "test_item_selection::TestTake::test_refcounting": ({"dtype"}, "object"),
    "test_multiarray::TestTake::test_ip_types": (
        {"dtype"}, "every np.sctypes type: complex, long double, object, S3 too"),
    "test_multiarray::TestTake::test_record_array": ({"dtype"}, "a structured dtype"),
    "test_ufunc::TestUfunc::test_inplace_fancy_indexing": (
        {"dtype", "index"}, "slices in add.at's indices; an object array (numpy's TypeError)"),
    "test_regression::TestRegression::test_take_object_fail": ({"dtype"}, "object"),
    "test_regression::TestRegression::test_object_array_refcounting": ({"dtype"}, "object"),
    "test_dtype::TestStructuredObjectRefcounting::test_structured_object_take_and_repeat": (
        {"dtype"}, "structured dtypes holding objects"),
    "test_custom_dtypes::TestSFloat::test_basic_ufunc_at": (
        {"dtype"}, "multiply.at of numpy's scaled-float test dtype"),
    "test_arraysetops::TestUnique::test_unique_axis": (
        {"dtype"}, "complex, long double, datetime64, timedelta64, structured"),
}

# numpy 2's own tests add these (numpy 1.24 has none of them, or passes them
# through): the same kinds of refusal, and "rank", an array of more dims than
# the library's maximum (numpy 2 allows 64; tensorjit 32). A key with its
# parameters names that case alone.
_LONGDOUBLE = "a long double array (typecode 'g', the 17th of the test's typecodes)"
REFUSED_NUMPY2: Dict[str, Tuple[Set[str], str]] = {
    "test_ufunc::TestUfunc::test_ufunc_at_basic[1]": ({"dtype"}, "numpy's rational test dtype"),
    "test_ufunc::TestUfunc::test_ufunc_at_basic[2]": ({"dtype"}, "a dtype numpy's test adds"),
    **{f"test_ufunc::TestUfunc::test_ufunc_at_inner_loops[{u}-17]": ({"dtype"}, _LONGDOUBLE)
       for u in (0, 1, 2, 4, 5)},
    **{f"test_ufunc::TestUfunc::test_at_negative_indexes[{u}-17]": ({"dtype"}, _LONGDOUBLE)
       for u in (0, 1, 3, 4)},
    "test_ufunc::TestUfunc::test_ufunc_at_inner_loops_complex": ({"dtype"}, "complex"),
    "test_ufunc::TestUfunc::test_ufunc_at_ellipsis": ({"index"}, "an Ellipsis in the index"),
    "test_ufunc::TestUfunc::test_ufunc_at_multiD": ({"index"}, "slices in the index"),
    "test_ufunc::TestUfunc::test_ufunc_at_advanced": ({"dtype"}, "an object array"),
    "test_ufunc::TestUfunc::test_at_no_loop_for_op": ({"dtype"}, "complex"),
    "test_indexing::TestMultiIndexingAutomated::test_multidim": (
        {"rank"}, "a take of an array of 33 and more dims"),
}

# numpy 2 tests that fail through tensorjit for a difference its docs state
# (python/README.md), and why.
DIFFERENT_NUMPY2: Dict[str, str] = {
    "test_ufunc::TestUfunc::test_ufunc_at_inner_loops[2-14]": (
        "multiply.at of float16 overflows to inf without numpy's RuntimeWarning: the kernels "
        "keep no floating-point error state"),
}

NUMPY2 = int(np.__version__.split(".")[0]) >= 2
if NUMPY2:
    REFUSED.update(REFUSED_NUMPY2)
DIFFERENT = DIFFERENT_NUMPY2 if NUMPY2 else {}

# numpy tests whose routed calls tensorjit.numpy all hands to numpy, as its
# docs say it does for ndarray subclasses and for objects overriding numpy
# (and, for ufunc.at, the calls whose bits numpy's own call must give).
DELEGATED: Dict[str, str] = {
    "test_regression::TestRegression::test_attributes": "an ndarray subclass with an attribute",
    "test_core::TestMaskedArrayMethods::test_take": "np.ma.MaskedArray",
    "test_umath::TestSpecialMethods::test_ufunc_override_with_super": (
        "subclasses overriding __array_ufunc__, and add.at of a float b into an int64 array "
        "(numpy's float64 loop: a b numpy promotes a's type for)"),
}

ROUTED_ATTRS = {"take", "take_along_axis", "put_along_axis", "at"}
ROUTED_NAMES = {"take", "take_along_axis", "put_along_axis"}


# --- the router ---------------------------------------------------------------

class Record:
    """What the routed calls of one test run did."""

    def __init__(self, routed: bool):
        self.routed = routed
        self.calls = 0  # calls that reached tensorjit.numpy's kernels
        self.delegated = 0  # calls tensorjit.numpy handed to numpy (subclasses, overrides)
        self.handed = 0  # ufunc.at calls tensorjit.numpy's _numpy_at served
        self.refusals: Set[str] = set()


_record: Optional[Record] = None

# tensorjit's element types (python/README.md, "Arrays"): numpy kinds and
# item sizes; anything else (object, strings, structured, complex, datetime,
# long double) has no kernel type.
_KINDS = {"b": {1}, "i": {1, 2, 4, 8}, "u": {1, 2, 4, 8}, "f": {2, 4, 8}}


def _no_kernel_type(a: Any) -> bool:
    try:
        dt = np.asarray(a).dtype
    except Exception:  # numpy cannot make an array of it at all
        return True
    return dt.itemsize not in _KINDS.get(dt.kind, set())


def _non_integer_add_at_index(indices: Any) -> bool:
    parts = indices if isinstance(indices, tuple) else (indices,)
    for p in parts:
        if p is None or p is Ellipsis or isinstance(p, slice):
            return True
        if np.asarray(p).dtype == np.bool_:
            return True
    return False


def _routed(tj_fn: Callable, np_fn: Callable, delegated: Callable[[inspect.BoundArguments], bool],
            refusal_kinds: Callable[[inspect.BoundArguments], Set[str]]) -> Callable:
    sig = inspect.signature(np_fn)

    def call(*args, **kwargs):
        rec = _record
        if rec is None or not rec.routed:
            return np_fn(*args, **kwargs)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:  # arguments numpy's signature refuses: tensorjit's own words
            bound = None
        if bound is not None and delegated(bound):  # tensorjit.numpy hands it to numpy, as its docs say
            rec.delegated += 1
            return tj_fn(*args, **kwargs)
        rec.calls += 1
        handed = rec.handed
        try:
            result = tj_fn(*args, **kwargs)
            if rec.handed > handed:  # tensorjit.numpy handed it to numpy by its rules
                rec.calls -= 1
                rec.delegated += 1
            return result
        except tensorjit.Error:
            kinds = refusal_kinds(bound) if bound is not None else set()
            if not kinds:
                raise  # a refusal the docs do not announce: the test sees it
        # refused as documented: numpy's own call decides what the test sees,
        # its result or its error (a test of numpy's IndexError for an object
        # array judges numpy's index check, not tensorjit's dtype check)
        rec.refusals |= kinds
        return np_fn(*args, **kwargs)

    call.__wrapped_np__ = np_fn
    return call


def _dtype_kinds(name: str) -> Callable[[inspect.BoundArguments], Set[str]]:
    return lambda b: {"dtype"} if _no_kernel_type(b.arguments[name]) else set()


def _take_kinds(b: inspect.BoundArguments) -> Set[str]:
    """take's documented refusals: no kernel type, or a rank beyond the
    library's (the data's, or the result's: data's less one plus indices')."""
    kinds = _dtype_kinds("a")(b)
    try:
        a, idx = np.asarray(b.arguments["a"]), np.asarray(b.arguments.get("indices", 0))
    except Exception:
        return kinds
    top = tensorjit._tensorjit.MAX_RANK
    if a.ndim > top or a.ndim - 1 + idx.ndim > top:
        kinds.add("rank")
    return kinds


def _add_at_kinds(b: inspect.BoundArguments) -> Set[str]:
    kinds = set()
    if _no_kernel_type(b.arguments["a"]):
        kinds.add("dtype")
    if _non_integer_add_at_index(b.arguments["indices"]):
        kinds.add("index")
    return kinds


def _np_at(ufunc: np.ufunc) -> Callable:
    def at(a, indices, b=None):
        return ufunc.at(a, indices, b) if b is not None else ufunc.at(a, indices)
    return at


def _tj_at(ufunc: np.ufunc, tj_fn: Callable) -> Callable:
    def at(a, indices, b=None):
        if b is None:  # numpy's own refusal: the ufunc is binary
            return ufunc.at(a, indices)
        return tj_fn(a, indices, b)
    return at


def _foreign(*names: str, hook: str = "__array_function__") -> Callable:
    """The arguments tensorjit.numpy's docs hand to numpy: an ndarray
    subclass, or an object overriding numpy through hook (for
    __array_ufunc__, a subclass only where it overrides it)."""
    def check(b: inspect.BoundArguments) -> bool:
        for n in names:
            o = b.arguments.get(n)
            t = type(o)
            if o is None or t is np.ndarray:
                continue
            if hook == "__array_ufunc__":
                if getattr(t, hook, np.ndarray.__array_ufunc__) is not np.ndarray.__array_ufunc__:
                    return True
            elif isinstance(o, np.ndarray) or hasattr(t, hook):
                return True
        return False
    return check


TAKE = _routed(tnp.take, np.take, _foreign("a", "out"), _take_kinds)
TAKE_ALONG = _routed(tnp.take_along_axis, np.take_along_axis, _foreign("arr", "indices"),
                     _dtype_kinds("arr"))
PUT_ALONG = _routed(tnp.put_along_axis, np.put_along_axis,
                    _foreign("arr", "indices", "values"), _dtype_kinds("arr"))
# np.<ufunc>.at for the ufuncs tensorjit.numpy names
UFUNC_AT = {uf: _routed(_tj_at(uf, fn), _np_at(uf), _foreign("a", "b", hook="__array_ufunc__"),
                        _add_at_kinds)
            for uf, fn in ((np.add, tnp.add_at), (np.subtract, tnp.subtract_at),
                           (np.multiply, tnp.multiply_at), (np.maximum, tnp.maximum_at),
                           (np.minimum, tnp.minimum_at))}


def _take_method(arr: np.ndarray) -> Callable:
    # ndarray.take(indices, axis=None, out=None, mode='raise') is np.take
    # with the array first
    return functools.wraps(arr.take)(lambda *args, **kwargs: TAKE(arr, *args, **kwargs))


def __tj_route__(obj: Any, attr: str) -> Any:
    if attr == "take" and isinstance(obj, np.ndarray):
        return _take_method(obj)
    if obj is np:
        return {"take": TAKE, "take_along_axis": TAKE_ALONG,
                "put_along_axis": PUT_ALONG}.get(attr) or getattr(obj, attr)
    if attr == "at" and isinstance(obj, np.ufunc) and obj in UFUNC_AT:
        return UFUNC_AT[obj]
    return getattr(obj, attr)


def __tj_name__(value: Any, name: str) -> Any:
    mine = {np.take: TAKE, np.take_along_axis: TAKE_ALONG, np.put_along_axis: PUT_ALONG}
    try:
        return mine.get(value, value)
    except TypeError:  # unhashable
        return value


# --- reading numpy's test modules --------------------------------------------

class _Rewrite(ast.NodeTransformer):
    def __init__(self):
        self.hits = 0

    def visit_Attribute(self, node):
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load) and node.attr in ROUTED_ATTRS:
            self.hits += 1
            return ast.copy_location(ast.Call(
                func=ast.Name("__tj_route__", ast.Load()),
                args=[node.value, ast.Constant(node.attr)], keywords=[]), node)
        return node

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and node.id in ROUTED_NAMES:
            self.hits += 1
            return ast.copy_location(ast.Call(
                func=ast.Name("__tj_name__", ast.Load()),
                args=[node, ast.Constant(node.id)], keywords=[]), node)
        return node


def _calls_routed(fn: ast.AST) -> bool:
    """Whether fn's own code holds a call _Rewrite routes."""
    return any((isinstance(n, ast.Attribute) and n.attr in ROUTED_ATTRS)
               or (isinstance(n, ast.Name) and n.id in ROUTED_NAMES) for n in ast.walk(fn))


def _referenced(fn: ast.AST) -> Set[str]:
    """Names and self.<attr>s a function refers to: the helpers it may call."""
    out = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) \
                and n.value.id in ("self", "cls"):
            out.add(n.attr)
    return out


def _relevant_tests(tree: ast.Module) -> List[Tuple[Optional[str], str]]:
    """(class or None, test name) of the tests that reach a routed call,
    directly or through a helper of their class or module."""
    module_fns = {f.name: f for f in tree.body
                  if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def closure(start: ast.AST, scope: Dict[str, ast.AST]) -> bool:
        seen, todo = set(), [start]
        while todo:
            fn = todo.pop()
            if _calls_routed(fn):
                return True
            for name in _referenced(fn):
                for sc in (scope, module_fns):
                    if name in sc and (id(sc), name) not in seen:
                        seen.add((id(sc), name))
                        todo.append(sc[name])
        return False

    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}

    def methods(name: str) -> Dict[str, ast.AST]:
        """A class's methods with those it inherits from classes of the
        module (numpy's norm tests live in mixins), its own first."""
        cls, merged = classes[name], {}
        for base in reversed(cls.bases):
            if isinstance(base, ast.Name) and base.id in classes:
                merged.update(methods(base.id))
        merged.update({f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)})
        return merged

    found = []
    for name, fn in module_fns.items():
        if name.startswith("test") and closure(fn, {}):
            found.append((None, name))
    for cname in classes:
        if cname.startswith("Test"):
            ms = methods(cname)
            for name, fn in ms.items():
                if name.startswith("test") and closure(fn, ms):
                    found.append((cname, name))
    return found


def _find(modname: str):
    """The spec of numpy's test module, where numpy 2 moved numpy.core's to
    numpy._core; None where the distribution left the tests out."""
    for name in (modname, modname.replace("numpy.core.", "numpy._core.", 1)):
        try:
            spec = importlib.util.find_spec(name)
        except ImportError:
            continue
        if spec is not None and spec.origin:
            return spec
    return None


@functools.lru_cache(maxsize=None)
def load(modname: str) -> Optional[Tuple[types.ModuleType, List[Tuple[Optional[str], str]]]]:
    spec = _find(modname)
    if spec is None:
        return None
    source = open(spec.origin, encoding="utf-8").read()
    tree = ast.parse(source, spec.origin)
    tests = _relevant_tests(tree)
    # the Test classes nothing here runs are left out (compiling all of
    # test_multiarray's costs more than running what it holds of these calls);
    # a kept class's bases in the module stay
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    keep, todo = set(), [c for c, _ in tests if c]
    while todo:
        name = todo.pop()
        if name not in keep:
            keep.add(name)
            todo += [b.id for b in classes[name].bases
                     if isinstance(b, ast.Name) and b.id in classes]
    tree.body = [n for n in tree.body if not (isinstance(n, ast.ClassDef)
                                              and n.name.startswith("Test")
                                              and n.name not in keep)]
    tree = ast.fix_missing_locations(_Rewrite().visit(tree))
    mod = types.ModuleType("tensorjit_routed." + modname)
    mod.__file__ = spec.origin
    mod.__package__ = spec.name.rpartition(".")[0]
    mod.__dict__.update(__tj_route__=__tj_route__, __tj_name__=__tj_name__)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(compile(tree, spec.origin, "exec"), mod.__dict__)
        except Exception as e:  # a test module that will not import here (a missing dependency)
            pytest.skip(f"{modname} does not import: {e!r}")
    return mod, tests


# --- running numpy's test functions ------------------------------------------

def _marks(obj: Any) -> list:
    return list(getattr(obj, "pytestmark", []))


def _param_sets(fn: Callable, cls: Optional[type]) -> List[Tuple[str, Dict[str, Any]]]:
    """(id, kwargs) of each parameter combination of pytest.mark.parametrize
    marks on the test and its class; [] where the test needs a fixture."""
    combos: List[Tuple[str, Dict[str, Any]]] = [("", {})]
    for mark in _marks(fn) + (_marks(cls) if cls else []):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        sets = []
        for n, v in enumerate(values):
            if type(v).__name__ == "ParameterSet":  # pytest.param(...): values always a tuple
                if any(m.name in ("skip", "xfail", "skipif") for m in v.marks):
                    continue
                pid, vals = v.id or str(n), tuple(v.values)
            else:
                pid, vals = str(n), (v,) if len(names) == 1 else tuple(v)
            sets.append((pid, dict(zip(names, vals))))
        combos = [(f"{a}-{b}".strip("-"), {**ka, **kb}) for a, ka in combos for b, kb in sets]
    wanted = [p for p in inspect.signature(fn).parameters if p != "self"]
    return [c for c in combos if set(wanted) <= set(c[1])]


def _skipped(fn: Callable, cls: Optional[type]) -> bool:
    for mark in _marks(fn) + (_marks(cls) if cls else []):
        if mark.name == "skip" or mark.name == "xfail":
            return True
        if mark.name == "skipif" and mark.args and mark.args[0] is True:
            return True
    return False


def _run_once(mod, cls_name, test_name, kwargs, routed: bool) -> Tuple[Optional[BaseException], Record]:
    global _record
    rec = Record(routed)
    _record = rec
    handed = tnp._numpy_at

    def counted(*args):
        rec.handed += 1
        return handed(*args)

    tnp._numpy_at = counted  # what tensorjit.numpy hands to numpy's ufunc.at is counted apart
    try:
        if cls_name:
            inst = getattr(mod, cls_name)()
            for setup in ("setup_method", "setup"):
                if hasattr(inst, setup):
                    getattr(inst, setup)()
                    break
            getattr(inst, test_name)(**kwargs)
            if hasattr(inst, "teardown_method"):
                inst.teardown_method()
        else:
            getattr(mod, test_name)(**kwargs)
        return None, rec
    except BaseException as e:  # pytest.skip's Skipped is a BaseException
        if isinstance(e, KeyboardInterrupt):
            raise
        return e, rec
    finally:
        _record = None
        tnp._numpy_at = handed


def run_module(modname: str) -> Dict[str, Tuple[str, str]]:
    """{numpy test id: (outcome, detail)}, outcome one of through, refused,
    failed, delegated (passed, its routed calls all handed to numpy by
    tensorjit.numpy's rule for subclasses), unrouted (passed, but no routed
    call reached tensorjit.numpy), skipped
    (numpy's own run fails or skips here, or it needs a fixture)."""
    loaded = load(modname)
    if loaded is None:
        return {}
    mod, tests = loaded
    results = {}
    tail = modname.rpartition(".")[2]
    for cls_name, test_name in tests:
        fn = getattr(getattr(mod, cls_name) if cls_name else mod, test_name)
        cls = getattr(mod, cls_name) if cls_name else None
        base = f"{tail}::{cls_name + '::' if cls_name else ''}{test_name}"
        if _skipped(fn, cls):
            results[base] = ("skipped", "marked skip")
            continue
        params = _param_sets(fn, cls)
        if not params:
            results[base] = ("skipped", "needs a fixture")
            continue
        for pid, kwargs in params:
            tid = f"{base}[{pid}]" if pid else base
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                err, rec = _run_once(mod, cls_name, test_name, kwargs, routed=True)
                if err is not None:  # numpy's own verdict: does it pass unrouted here?
                    base_err, _ = _run_once(mod, cls_name, test_name, kwargs, routed=False)
                    if base_err is not None:
                        results[tid] = ("skipped", f"unrouted: {type(base_err).__name__}: "
                                                   f"{base_err}")
                        continue
            if err is not None and os.environ.get("TENSORJIT_OWN_TESTS_TRACE"):
                # for a person reading a failure: where it came from
                results[tid] = ("failed", "".join(traceback.format_exception(
                    type(err), err, err.__traceback__))[-3000:])
            elif err is not None:
                results[tid] = ("failed", f"{type(err).__name__}: {err}".strip()[:400])
            elif rec.calls == 0:
                results[tid] = ("delegated", "") if rec.delegated else ("unrouted", "")
            elif rec.refusals:
                results[tid] = ("refused", ",".join(sorted(rec.refusals)))
            else:
                results[tid] = ("through", "")
    return results


def _verdict(tid: str, outcome: str, detail: str) -> Optional[str]:
    key = tid if tid in REFUSED or tid in DIFFERENT else tid.split("[")[0]
    if outcome == "failed":
        return None if key in DIFFERENT else f"{tid}: {detail}"
    if key in DIFFERENT:
        return f"{tid}: {outcome} now; take it out of DIFFERENT"
    if outcome == "refused":
        want = REFUSED.get(key)
        if want is None:
            return f"{tid}: refused ({detail}) where REFUSED lists nothing"
        if set(detail.split(",")) != want[0]:
            return f"{tid}: refused ({detail}), REFUSED says {sorted(want[0])}"
    if outcome == "through" and key in REFUSED:
        return f"{tid}: passes through tensorjit now; take it out of REFUSED"
    if (outcome == "delegated") != (key in DELEGATED):
        return f"{tid}: {outcome}, where DELEGATED says {DELEGATED.get(key, 'nothing')}"
    return None


@pytest.mark.parametrize("modname", MODULES)
def test_numpy_own_tests(modname):
    if _find(modname) is None:
        pytest.skip(f"{modname}: numpy's tests are not installed")
    results = run_module(modname)
    if not results:
        pytest.skip(f"{modname}: not installed, or no test reaches the routed calls")
    problems = [v for tid, (o, d) in results.items() if (v := _verdict(tid, o, d))]
    assert not problems, "\n".join(problems)


if __name__ == "__main__":  # the full classification, for a person reading it
    import collections
    counts = collections.Counter()
    for m in (sys.argv[1:] or MODULES):
        for tid, (outcome, detail) in run_module(m).items():
            counts[outcome] += 1
            print(f"{outcome:9} {tid} {detail}")
    print(dict(counts))
