"""ONNX's own operator test cases, run through tensorjit with ONNX's semantics.

The installed onnx package carries the generators of its backend node tests
(onnx/backend/test/case/node/gather.py, gathernd.py, scatternd.py, ...): each
one builds a node, its inputs, and the output ONNX's reference code computes
for them, and hands the three to the package's `expect`. These tests catch
those calls at run time (nothing of ONNX's is copied here) and hold tensorjit
to ONNX's outputs, bit for bit:

- the Python functions, with the mapping SPEC section 9 gives an ONNX node
  (negative indices wrap, beyond is an error; ScatterND as ScatterNDUpdate-15,
  ScatterElements and Scatter as ScatterElementsUpdate-12, add/mul by ONNX's
  names), with int32 indices where ONNX's schema allows them, and in place;
- the op's command on the case's .npy files.

and `tensorjit model FILE.onnx --check` (the CLI of the source tree, or
TENSORJIT_CLI) to ONNX's model rules, not its outputs: each case built into
a model, the indices a graph input or an initializer, and with int32 indices
(which ONNX's schema decides on), must compile, or be refused, as the case
and the schema say, and pass --check, whose runs hold the model's JIT kernel
to the reference kernel on inputs of --check's own.

A reduction the SPEC does not list for ONNX must be refused, never computed.
Skipped where onnx or its case modules are absent (Debian: python3-onnx).
onnx 1.12 has no ScatterND / ScatterElements min or max cases (opset 18):
those run where a newer onnx is installed.
"""

import functools
import importlib
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, List

import numpy as np
import pytest

import tensorjit
from tj_cli import CLI_ENV, find_cli

onnx = pytest.importorskip("onnx")
try:
    from onnx import helper, numpy_helper
    import onnx.backend.test.case.node as node_cases
except ImportError as e:  # a build of onnx without its backend test cases
    pytest.skip(f"onnx has no backend node cases: {e}", allow_module_level=True)

MODULES = ("gather", "gatherelements", "gathernd", "scatter", "scatterelements", "scatternd")

# The attributes each op takes in the opsets tensorjit reads (11 to 21); one
# outside this table fails its case, so that a newer onnx's addition is seen
# rather than dropped.
ATTRIBUTES = {"Gather": {"axis"}, "GatherElements": {"axis"}, "GatherND": {"batch_dims"},
              "ScatterND": {"reduction"}, "ScatterElements": {"axis", "reduction"},
              "Scatter": {"axis"}}
# SPEC section 9: ScatterND's reductions; ScatterElements has the same in ONNX.
REDUCTIONS = {"none", "add", "mul", "min", "max"}
POLICY = "negative-wraps"  # SPEC section 9: ONNX's negative indices wrap


@dataclass
class Case:
    name: str
    node: object
    inputs: List[np.ndarray]
    expected: np.ndarray
    opset: int
    attrs: Dict[str, object] = field(default_factory=dict)

    @property
    def op(self):
        return self.node.op_type


def _opset(node, kwargs):
    for imp in kwargs.get("opset_imports", ()):
        if imp.domain in ("", "ai.onnx"):
            return imp.version
    # what ONNX's expect writes when the case names none: the op's newest version
    return onnx.defs.get_schema(node.op_type, node.domain).since_version


def _collect():
    """Runs the generators with `expect` replaced by a recorder. They run when
    their module is imported (its classes' metaclass calls every export*), and
    each module took `expect` from the package as it was imported: so the
    package's name is swapped first, and a module some other code imported
    already is reloaded."""
    cases, errors = [], []

    def record(node, inputs, outputs, name, **kwargs):
        attrs = {}
        for a in node.attribute:
            v = helper.get_attribute_value(a)
            attrs[a.name] = v.decode() if isinstance(v, bytes) else v
        cases.append(Case(name, node, [np.array(x, copy=True) for x in inputs],
                          np.array(outputs[0], copy=True), _opset(node, kwargs), attrs))

    original, rng = node_cases.expect, np.random.get_state()
    node_cases.expect = record
    try:
        for module in MODULES:
            full = f"{node_cases.__name__}.{module}"
            try:
                if full in sys.modules:
                    importlib.reload(sys.modules[full])
                else:
                    importlib.import_module(full)
            except ModuleNotFoundError as e:
                if e.name != full:  # the module is there but cannot import
                    errors.append(f"{full}: {e!r}")
            except Exception as e:  # a generator that fails is a finding too
                errors.append(f"{full}: {e!r}")
    finally:
        node_cases.expect = original
        np.random.set_state(rng)  # the generators seed numpy's global generator
    return cases, errors


CASES, ERRORS = _collect()
SCATTERS = [c for c in CASES if c.op in ("ScatterND", "ScatterElements", "Scatter")]


def _ids(cases):
    return [c.name for c in cases]


def _unknown(case):
    extra = set(case.attrs) - ATTRIBUTES.get(case.op, set())
    return (f"{case.name}: {case.op} with {sorted(extra)}, unknown to this test"
            if case.op not in ATTRIBUTES or extra else None)


def _reduction(case):
    return case.attrs.get("reduction", "none")


def _run(case, inputs, out=None):
    """The case's node as tensorjit's Python call, with ONNX's semantics."""
    a, op = case.attrs, case.op
    extra = {} if out is None else {"out": out}
    if op == "Gather":
        return tensorjit.gather(inputs[0], inputs[1], a.get("axis", 0), 0, opset=8,
                                index_policy=POLICY, **extra)
    if op == "GatherElements":
        return tensorjit.gather_elements(inputs[0], inputs[1], a.get("axis", 0),
                                         index_policy=POLICY, **extra)
    if op == "GatherND":  # GatherND-8's output shape is ONNX's (batch dims kept)
        return tensorjit.gather_nd(inputs[0], inputs[1], a.get("batch_dims", 0), opset=8,
                                   index_policy=POLICY, **extra)
    if op == "ScatterND":
        return tensorjit.scatter_nd_update(*inputs, _reduction(case), opset=15,
                                           index_policy=POLICY, **extra)
    return tensorjit.scatter_elements_update(*inputs, a.get("axis", 0), _reduction(case),
                                             opset=12, index_policy=POLICY, **extra)


def _assert_onnx_output(got, case, how):
    want = case.expected
    assert (got.dtype, got.shape) == (want.dtype, want.shape), \
        f"{case.name} ({how}): {got.dtype} {got.shape}, ONNX gives {want.dtype} {want.shape}"
    # bytes, not values: NaN and -0.0 count as ONNX wrote them
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes(), \
        f"{case.name} ({how}):\n{got}\nONNX gives\n{want}"


def test_generators_load():
    assert not ERRORS, ERRORS
    if not CASES:
        pytest.skip("onnx's node case modules of this family are absent")
    # the family's six modules each give cases in every onnx from 1.12 on
    assert {c.op for c in CASES} >= {"Gather", "GatherElements", "GatherND", "ScatterND",
                                      "ScatterElements", "Scatter"}


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_python(case):
    assert _unknown(case) is None, _unknown(case)
    if _reduction(case) not in REDUCTIONS:
        with pytest.raises(tensorjit.SignatureError, match=_reduction(case)):
            _run(case, case.inputs)
        return
    _assert_onnx_output(_run(case, case.inputs), case, "Python")


def _int32_allowed(case):
    schema = onnx.defs.get_schema(case.op, case.opset, case.node.domain)
    param = getattr(schema.inputs[1], "type_str", None) or schema.inputs[1].typeStr  # onnx 1.16
    allowed = {t.type_param_str: set(t.allowed_type_strs) for t in schema.type_constraints}
    return "tensor(int32)" in allowed.get(param, {param})


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_python_int32_indices(case):
    if not _int32_allowed(case) or _reduction(case) not in REDUCTIONS or _unknown(case):
        pytest.skip("ONNX takes int64 indices only here, or test_python covers the case")
    inputs = list(case.inputs)
    assert np.array_equal(inputs[1].astype(np.int32), inputs[1])  # small values, no wrap
    inputs[1] = inputs[1].astype(np.int32)
    _assert_onnx_output(_run(case, inputs), case, "int32 indices")


@pytest.mark.parametrize("case", SCATTERS, ids=_ids(SCATTERS))
def test_python_in_place(case):
    if _reduction(case) not in REDUCTIONS or _unknown(case):
        pytest.skip("test_python covers the case")
    data = case.inputs[0].copy()
    _run(case, [data] + case.inputs[1:], out=data)  # SPEC section 5: out == data
    _assert_onnx_output(data, case, "in place")


# --- the command-line tool ---------------------------------------------------

CLI = find_cli()


@functools.lru_cache(maxsize=None)
def _has_onnx_reader():
    usage = subprocess.run([CLI, "model", "--help"], capture_output=True, text=True, env=CLI_ENV)
    return "built without the ONNX reader" not in usage.stdout + usage.stderr


def _cli_or_skip(onnx_reader=False):
    if CLI is None:
        pytest.skip("no tensorjit CLI (build/tensorjit, or TENSORJIT_CLI)")
    if onnx_reader and not _has_onnx_reader():
        pytest.skip("this tensorjit was built without the ONNX reader")
    return CLI


def _tensor_type(dtype):
    to_type = getattr(helper, "np_dtype_to_tensor_dtype", None)  # onnx >= 1.13
    return to_type(dtype) if to_type else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[dtype]


def _model(case, constant_indices, index_dtype=None):
    """The case as ONNX's expect writes its model (the node, each input a graph
    input of its shape, the output of ONNX's shape, the case's opset), or with
    the indices an initializer, which the reader reads and range-checks."""
    names = [n for n in case.node.input if n]
    inputs, initializers = [], []
    arrays = list(case.inputs)
    if index_dtype is not None:
        arrays[1] = arrays[1].astype(index_dtype)
    for i, (name, arr) in enumerate(zip(names, arrays)):
        if constant_indices and i == 1:
            initializers.append(numpy_helper.from_array(arr, name))
        else:
            inputs.append(helper.make_tensor_value_info(name, _tensor_type(arr.dtype), arr.shape))
    output = helper.make_tensor_value_info(case.node.output[0], _tensor_type(case.expected.dtype),
                                           case.expected.shape)
    graph = helper.make_graph([case.node], case.name, inputs, [output], initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)])


@pytest.mark.parametrize("constant_indices", [False, True], ids=["indices-input", "indices-const"])
@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_model_check(case, constant_indices, tmp_path):
    cli = _cli_or_skip(onnx_reader=True)
    assert _unknown(case) is None, _unknown(case)
    path = tmp_path / f"{case.name}.onnx"
    onnx.save(_model(case, constant_indices), str(path))
    done = subprocess.run([cli, "model", str(path), "--check"], capture_output=True, text=True,
                          env=CLI_ENV, timeout=120)
    said = done.stdout + done.stderr
    if _reduction(case) not in REDUCTIONS:
        assert done.returncode == 1 and "refused" in said and _reduction(case) in said, said
    elif case.opset > 21:  # SPEC section 9 reads opsets 11 to 21; newer are skipped, saying so
        assert done.returncode == 0 and "1 skipped" in said, said
    else:
        assert done.returncode == 0, said
        assert "1 compiled (1 checked ok), 0 skipped, 0 refused" in said, said


FIRST_OF_EACH_OP = list({c.op: c for c in reversed(CASES)}.values())


@pytest.mark.parametrize("case", FIRST_OF_EACH_OP, ids=_ids(FIRST_OF_EACH_OP))
def test_model_int32_indices(case, tmp_path):
    """int32 indices are read where ONNX's schema takes them and refused where
    it takes int64 alone (GatherND, ScatterND), as ONNX Runtime refuses the
    model: ONNX's schema is the oracle, asked here, not a list of this test's."""
    cli = _cli_or_skip(onnx_reader=True)
    if _reduction(case) not in REDUCTIONS or _unknown(case) or case.opset > 21:
        pytest.skip("test_model_check covers the case")
    path = tmp_path / f"{case.name}.onnx"
    onnx.save(_model(case, False, np.int32), str(path))
    done = subprocess.run([cli, "model", str(path), "--check"], capture_output=True, text=True,
                          env=CLI_ENV, timeout=120)
    said = done.stdout + done.stderr
    if _int32_allowed(case):
        assert done.returncode == 0 and "1 compiled (1 checked ok)" in said, said
    else:
        assert done.returncode == 1, said
        assert f"is i32: ONNX's {case.op} takes int64 indices" in said, said


COMMANDS = {"Gather": "gather", "GatherElements": "gather-elements", "GatherND": "gather-nd",
            "ScatterND": "scatter-nd-update", "ScatterElements": "scatter-elements-update",
            "Scatter": "scatter-elements-update"}


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
def test_cli_op(case, tmp_path):
    cli = _cli_or_skip()
    if _reduction(case) not in REDUCTIONS or _unknown(case):
        pytest.skip("test_python covers the case")
    args = [cli, COMMANDS[case.op], "--index-policy", POLICY]
    for flag, arr in zip(("--data", "--indices", "--updates"), case.inputs):
        path = tmp_path / f"{flag[2:]}.npy"
        np.save(path, arr)
        args += [flag, str(path)]
    if case.op == "GatherND":
        args += ["--batch-dims", str(case.attrs.get("batch_dims", 0)), "--opset", "8"]
    else:
        args += [] if case.op == "ScatterND" else ["--axis", str(case.attrs.get("axis", 0))]
    if case.op == "Gather":
        args += ["--opset", "8"]
    if case.op.startswith("Scatter"):
        args += ["--reduction", _reduction(case),
                 "--opset", "15" if case.op == "ScatterND" else "12"]
    out = tmp_path / "out.npy"
    done = subprocess.run(args + ["-o", str(out)], capture_output=True, text=True, env=CLI_ENV,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    _assert_onnx_output(np.load(out), case, "CLI")
