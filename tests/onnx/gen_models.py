"""Writes the ONNX test models of test_onnx into a folder, and what ONNX
itself says of them: expected.tsv holds, for each indexing node, the output
shape onnx.shape_inference gives (the oracle: the models are saved without
it), and bad.tsv what each invalid model must be refused or skipped with.

usage: python3 gen_models.py OUT_DIR

Everything is written under OUT_DIR, which must exist: the models, their
data files and the two .tsv files in OUT_DIR itself, but for the models whose
external data leads out of their folder, in OUT_DIR/escape/, with the file
they point at, outside.bin, in OUT_DIR (escape/link.bin is a symbolic link
to it). Nothing outside OUT_DIR is touched. Run again into the same OUT_DIR,
it replaces what it wrote there before.
"""
import os
import sys

import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference
import numpy as np

F, I32, I64, F16, U8 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64, \
    TensorProto.FLOAT16, TensorProto.UINT8
OUT = sys.argv[1]
# the models that escape their folder, which is this one: their data lies
# in OUT, a folder the caller gave, never above it
ESCAPE = os.path.join(OUT, "escape")
expected, bad = [], []

# what an earlier run left that writing again would not replace: onnx.save
# appends external data to a file that exists (external.bin would grow, and
# external_short.onnx's 32 bytes at offset 64 would be there), and
# os.symlink will not overwrite link.bin
for stale in ("external.bin", os.path.join("escape", "link.bin")):
    if os.path.lexists(os.path.join(OUT, stale)):
        os.remove(os.path.join(OUT, stale))
os.makedirs(ESCAPE, exist_ok=True)


def vi(name, t, shape):
    return helper.make_tensor_value_info(name, t, shape)


def model(nodes, inputs, outputs, opset, inits=(), value_info=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits),
                          value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def shape_text(tp):
    if not tp.tensor_type.HasField("shape"):
        return None
    dims = []
    for d in tp.tensor_type.shape.dim:
        dims.append(str(d.dim_value) if d.HasField("dim_value") else "?")
    return "[" + ",".join(dims) + "]"


def inferred(graph, out):
    """The inferred type of `out` in graph or its bodies."""
    for v in list(graph.value_info) + list(graph.output):
        if v.name == out:
            return v.type
    for n in graph.node:
        for a in n.attribute:
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                t = inferred(g, out)
                if t is not None:
                    return t
    return None


def indexing_nodes(graph):
    ops = {"GatherND", "Gather", "GatherElements", "ScatterND", "ScatterElements", "Scatter"}
    for n in graph.node:
        if n.op_type in ops:
            yield n
        for a in n.attribute:
            for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                yield from indexing_nodes(g)


def save(name, m, **kw):
    """Saves m bare; records ONNX's inferred output shape of each indexing node."""
    full = shape_inference.infer_shapes(m, strict_mode=True)
    for n in indexing_nodes(full.graph):
        t = inferred(full.graph, n.output[0])
        assert t is not None and shape_text(t), (name, n.name)
        expected.append((name, n.name, shape_text(t)))
    onnx.save(m, os.path.join(OUT, name), **kw)


def save_bare(name, m):
    """Saves m with no row in expected.tsv: ONNX infers no output for it, or
    its node's name would break the file's lines."""
    onnx.save(m, os.path.join(OUT, name))


def one(name, op, data, indices, opset, updates=None, idx_type=I64, dtype=F, inits=(), **attrs):
    ins = ["data", "indices"] + (["updates"] if updates is not None else [])
    node = helper.make_node(op, ins, ["out"], name=name.split(".")[0], **attrs)
    inputs = [vi("data", dtype, data)]
    if not any(i.name == "indices" for i in inits):
        inputs.append(vi("indices", idx_type, indices))
    if updates is not None:
        inputs.append(vi("updates", dtype, updates))
    return model([node], inputs, [vi("out", dtype, None)], opset, inits)


# every node type at the opsets where it changed, with each attribute
for opset in range(11, 19):
    save(f"gathernd_{opset}.onnx", one(f"gathernd_{opset}.onnx", "GatherND", [2, 3, 4],
                                       [2, 1, 2], opset))
    save(f"gather_{opset}.onnx", one(f"gather_{opset}.onnx", "Gather", [5, 6, 7], [2, 3],
                                     opset, axis=1))
    save(f"gatherelements_{opset}.onnx", one(f"gatherelements_{opset}.onnx", "GatherElements",
                                             [4, 5], [4, 2], opset, axis=-1))
    save(f"scatternd_{opset}.onnx", one(f"scatternd_{opset}.onnx", "ScatterND", [4, 5, 6],
                                        [3, 2], opset, updates=[3, 6]))
    save(f"scatterelements_{opset}.onnx", one(f"scatterelements_{opset}.onnx", "ScatterElements",
                                              [4, 5], [2, 5], opset, updates=[2, 5], axis=0))
for b in (0, 1, 2):
    save(f"gathernd_b{b}.onnx", one(f"gathernd_b{b}.onnx", "GatherND", [2, 3, 4, 5],
                                    [2, 3, 1] if b == 2 else [2, 4, 2], 13, batch_dims=b))
for axis in (-3, 0, 2):
    save(f"gather_axis{axis + 3}.onnx", one(f"gather_axis{axis + 3}.onnx", "Gather", [5, 6, 7],
                                            [4], 13, axis=axis, idx_type=I32, dtype=F16))
# int32 indices where ONNX's Tind takes them (strict inference, above, agrees)
save("gatherelements_i32.onnx", one("gatherelements_i32.onnx", "GatherElements", [4, 5],
                                    [4, 2], 13, axis=1, idx_type=I32))
save("scatterelements_i32.onnx", one("scatterelements_i32.onnx", "ScatterElements", [4, 5],
                                     [2, 5], 16, updates=[2, 5], idx_type=I32))
for red in ("none", "add", "mul"):
    save(f"scatternd_{red}.onnx", one(f"scatternd_{red}.onnx", "ScatterND", [8, 3], [4, 1], 16,
                                      updates=[4, 3], reduction=red))
    save(f"scatterelements_{red}.onnx", one(f"scatterelements_{red}.onnx", "ScatterElements",
                                            [3, 4], [3, 2], 16, updates=[3, 2], axis=1,
                                            reduction=red, dtype=I32))
for red in ("min", "max"):
    save(f"scatternd_{red}.onnx", one(f"scatternd_{red}.onnx", "ScatterND", [8, 3], [4, 1], 18,
                                      updates=[4, 3], reduction=red))
    save(f"scatterelements_{red}.onnx", one(f"scatterelements_{red}.onnx", "ScatterElements",
                                            [3, 4], [3, 2], 18, updates=[3, 2], axis=1,
                                            reduction=red))
save("scatter_10.onnx", one("scatter_10.onnx", "Scatter", [3, 3], [1, 2], 10, updates=[1, 2],
                            axis=1, dtype=U8))
# an initializer that a graph input names too is that input's default value
# (ir_version 4 on): the input, of any n, not a constant of 2
save("initializer_default.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="initializer_default")],
    [vi("data", F, [4, 3]), vi("indices", I64, ["n"])], [vi("out", F, None)], 13,
    inits=[numpy_helper.from_array(np.array([0, 7], dtype=np.int64), "indices")]))
# torch.gather's export: indices smaller than data but along the axis (ONNX
# asks only for equal ranks)
save("gatherelements_small.onnx", one("gatherelements_small.onnx", "GatherElements", [3, 4],
                                      [2, 2], 13, axis=1))

# symbolic dims: dynamic dims of one kernel
save("symbolic.onnx", model(
    [helper.make_node("GatherND", ["data", "idx"], ["o1"], name="sym_gathernd"),
     helper.make_node("Gather", ["data", "idx2"], ["o2"], name="sym_gather", axis=0),
     helper.make_node("ScatterElements", ["data", "eidx", "upd"], ["o3"], name="sym_scatter",
                      axis=0, reduction="add")],
    [vi("data", F, ["N", 5]), vi("idx", I64, ["M", 1]), vi("idx2", I64, ["K"]),
     vi("eidx", I64, ["N", 5]), vi("upd", F, ["N", 5])],
    [vi("o1", F, None), vi("o2", F, None), vi("o3", F, None)], 16))

# constant indices: raw_data, typed int32_data, a Constant node
raw = numpy_helper.from_array(np.array([[0], [4], [-1]], dtype=np.int64), "indices")
typed = helper.make_tensor("indices", I32, [2], [1, -6])
save("const_raw.onnx", one("const_raw.onnx", "GatherND", [5, 2], None, 13, inits=[raw]))
save("const_typed.onnx", one("const_typed.onnx", "Gather", [6, 2], None, 13, inits=[typed]))
cnode = helper.make_node("Constant", [], ["cidx"], value=helper.make_tensor(
    "v", I64, [2, 2], [0, 1, 1, 0]))
save("const_node.onnx", model(
    [cnode, helper.make_node("GatherElements", ["data", "cidx"], ["out"], name="const_node",
                             axis=1)],
    [vi("data", F, [2, 2])], [vi("out", F, None)], 13))

# Constant nodes of value_ints / value_int (opset 12+): indices whose shape
# the node's attribute gives, with no tensor
save("const_ints.onnx", model(
    [helper.make_node("Constant", [], ["ci"], value_ints=[2, 0, 1]),
     helper.make_node("Constant", [], ["cs"], value_int=3),
     helper.make_node("Gather", ["data", "ci"], ["o1"], name="const_ints", axis=0),
     helper.make_node("Gather", ["data", "cs"], ["o2"], name="const_int", axis=1)],
    [vi("data", F, [4, 5])], [vi("o1", F, None), vi("o2", F, None)], 13))

# subgraphs: If branches, a Loop body, a Scan body, a body inside a body
then_g = helper.make_graph([helper.make_node("Gather", ["data", "indices"], ["t"],
                                             name="then_gather", axis=0)],
                           "then", [], [vi("t", F, None)])
else_g = helper.make_graph([helper.make_node("GatherElements", ["data", "eidx"], ["e"],
                                             name="else_gatherelements", axis=1)],
                           "else", [], [vi("e", F, None)])
inner_if = helper.make_node("If", ["cond"], ["t2"], name="inner_if", then_branch=then_g,
                            else_branch=else_g)
loop_body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     helper.make_node("ScatterND", ["x_in", "sidx", "supd"], ["x_out"], name="loop_scatternd",
                      reduction="add")],
    "body", [vi("i", I64, []), vi("c_in", TensorProto.BOOL, []), vi("x_in", F, [4, 3])],
    [vi("c_out", TensorProto.BOOL, []), vi("x_out", F, [4, 3])])
scan_body = helper.make_graph(
    [helper.make_node("GatherND", ["s_state", "s_row"], ["s_next"], name="scan_gathernd",
                      batch_dims=0),
     helper.make_node("Identity", ["s_next"], ["s_out"])],
    "scan", [vi("s_state", F, [3]), vi("s_row", I64, [3, 1])],
    [vi("s_next", F, [3]), vi("s_out", F, [3])])
outer_then = helper.make_graph([inner_if], "outer_then", [], [vi("t2", F, None)])
outer_else = helper.make_graph([helper.make_node("Identity", ["data"], ["e2"])], "outer_else",
                               [], [vi("e2", F, None)])
save("subgraphs.onnx", model(
    [helper.make_node("If", ["cond"], ["y"], name="outer_if", then_branch=outer_then,
                      else_branch=outer_else),
     helper.make_node("Loop", ["trip", "", "x0"], ["xl"], name="loop", body=loop_body),
     helper.make_node("Scan", ["s0", "rows"], ["sf", "ys"], name="scan", body=scan_body,
                      num_scan_inputs=1)],
    [vi("cond", TensorProto.BOOL, []), vi("data", F, [4, 4]), vi("indices", I64, [2]),
     vi("eidx", I64, [4, 2]), vi("trip", I64, []), vi("x0", F, [4, 3]),
     vi("sidx", I64, [2, 1]), vi("supd", F, [2, 3]), vi("s0", F, [3]), vi("rows", I64, [5, 3, 1])],
    [vi("y", F, None), vi("xl", F, None), vi("sf", F, None), vi("ys", F, None)], 16))

# external data: the indices in a file beside the model
ext = one("external.onnx", "Gather", [7, 3], None, 13,
          inits=[numpy_helper.from_array(np.arange(-3, 7, dtype=np.int64), "indices")])
save("external.onnx", ext, save_as_external_data=True, all_tensors_to_one_file=True,
     location="external.bin", size_threshold=0)


# torch's node names: longer than the listing's least name column, with slashes
save("long_names.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["t"],
                      name="/embeddings/token_embedding/Gather"),
     helper.make_node("Gather", ["data", "indices"], ["p"], name="/pos/Gather")],
    [vi("data", F, [5, 3]), vi("indices", I64, [2])], [vi("t", F, None), vi("p", F, None)], 16))
# updates without a shape (torch's index_put export): ONNX's rules give it
save("scatternd_updates_unshaped.onnx", model(
    [helper.make_node("ScatterND", ["data", "indices", "updates"], ["out"], name="su")],
    [vi("data", F, [8, 3]), vi("indices", I64, [4, 1]), vi("updates", F, None)],
    [vi("out", F, None)], 16))
# GatherND whose tuple length is symbolic: a dynamic family whose output
# rank each call's K sets (no output shape to infer)
save_bare("gathernd_dynamic_k.onnx", model(
    [helper.make_node("GatherND", ["data", "indices"], ["out"], name="gnd_k")],
    [vi("data", F, [4, 5]), vi("indices", I64, [2, "K"])], [vi("out", F, None)], 16))
# names no terminal should interpret: a newline, an ANSI escape, a byte of no UTF-8
save_bare("odd_names.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="two\nlines\x1b[31mred")],
    [vi("data", F, [5, 3]), vi("indices", I64, [2])], [vi("out", F, None)], 16))
with open(os.path.join(OUT, "odd_names.onnx"), "rb") as f:
    odd = f.read()
# a byte of no UTF-8 and an overlong NUL, which onnx would not write itself
with open(os.path.join(OUT, "odd_names.onnx"), "wb") as f:
    f.write(odd.replace(b"lines", b"l\xff\xc0\x80s"))

# unsorted but acyclic: ONNX's checker asks for the file's order, ONNX Runtime
# sorts the nodes itself and runs them, and so does tensorjit read them. The
# oracle is ONNX's inference on the sorted graph; the file holds every graph's
# nodes reversed: Gathers read values computed later in the file, and the If's
# branch reads `h`, which a node after the If computes
def reversed_nodes(g):
    nodes = list(g.node)
    del g.node[:]
    g.node.extend(reversed(nodes))
    for n in nodes:
        for a in n.attribute:
            for b in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                reversed_nodes(b)


def save_unsorted(name, m):
    """Records ONNX's inferred output shapes on m, then saves it unsorted."""
    full = shape_inference.infer_shapes(m, strict_mode=True)
    for n in indexing_nodes(full.graph):
        expected.append((name, n.name, shape_text(inferred(full.graph, n.output[0]))))
    reversed_nodes(m.graph)
    onnx.save(m, os.path.join(OUT, name))


unsorted_then = helper.make_graph(
    [helper.make_node("Gather", ["h", "indices"], ["ht"], name="unsorted_then_gather", axis=0),
     helper.make_node("Identity", ["ht"], ["t"])], "then", [], [vi("t", F, None)])
unsorted_else = helper.make_graph([helper.make_node("Gather", ["h", "indices"], ["e"],
                                                    name="unsorted_else_gather", axis=1)],
                                  "else", [], [vi("e", F, None)])
save_unsorted("unsorted.onnx", model(
    [helper.make_node("Relu", ["data"], ["h"]),
     helper.make_node("GatherElements", ["h", "eidx"], ["g"], name="unsorted_gatherelements",
                      axis=1),
     helper.make_node("Gather", ["g", "indices"], ["out"], name="unsorted_gather", axis=0),
     helper.make_node("If", ["cond"], ["y"], name="unsorted_if", then_branch=unsorted_then,
                      else_branch=unsorted_else)],
    [vi("cond", TensorProto.BOOL, []), vi("data", F, [5, 5]), vi("eidx", I64, [5, 2]),
     vi("indices", I64, [3])],
    [vi("out", F, None), vi("y", F, None)], 16,
    value_info=[vi("h", F, [5, 5]), vi("g", F, [5, 2]), vi("ht", F, [3, 5])]))
# a body's own input shadows the outer value of its name (ONNX Runtime: "inputs
# and initializers override any outer scope values"): the Loop's body reads
# its x_in, not the x_in that `post` computes from the Loop's output, so no cycle
shadow_body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     helper.make_node("GatherElements", ["x_in", "eidx"], ["x_out"], name="shadowed_gather",
                      axis=0)],
    "body", [vi("i", I64, []), vi("c_in", TensorProto.BOOL, []), vi("x_in", F, [4, 3])],
    [vi("c_out", TensorProto.BOOL, []), vi("x_out", F, [4, 3])])
save_bare("shadowed.onnx", model(
    [helper.make_node("Loop", ["trip", "", "x0"], ["xl"], name="loop", body=shadow_body),
     helper.make_node("Relu", ["xl"], ["x_in"], name="post")],
    [vi("trip", I64, []), vi("x0", F, [4, 3]), vi("eidx", I64, [4, 3])],
    [vi("x_in", F, None)], 16))

# names that look defined twice but are not, read as ONNX Runtime reads
# them: an If's branch whose node outputs the If's own output name (ONNX's
# checker adds a node's outputs to the scope only after its bodies); the
# two branches, siblings, each with a node `pick` whose output is `tmp`;
# a branch's node named as a node of the main graph (node names are per
# graph); left-out optional outputs ("") of two nodes
names_then = helper.make_graph(
    [helper.make_node("Gather", ["data", "indices"], ["tmp"], name="pick", axis=0),
     helper.make_node("Identity", ["tmp"], ["y"], name="relu")], "then", [], [vi("y", F, None)])
names_else = helper.make_graph(
    [helper.make_node("Gather", ["data", "indices"], ["tmp"], name="pick", axis=1),
     helper.make_node("Identity", ["tmp"], ["e"], name="relu")], "else", [], [vi("e", F, None)])
save_bare("names_ok.onnx", model(
    [helper.make_node("Relu", ["data"], ["r"], name="relu"),
     helper.make_node("If", ["cond"], ["y"], name="if", then_branch=names_then,
                      else_branch=names_else),
     helper.make_node("Dropout", ["r"], ["d1", ""], name="drop1"),
     helper.make_node("Dropout", ["d1"], ["d2", ""], name="drop2")],
    [vi("cond", TensorProto.BOOL, []), vi("data", F, [4, 4]), vi("indices", I64, [4])],
    [vi("y", F, None), vi("d2", F, None)], 16, value_info=[vi("tmp", F, [4, 4])]))

# invalid models, and what tensorjit must say of each
def bad_model(name, m, kind, want):
    onnx.save(m, os.path.join(OUT, name))
    bad.append((name, kind, want))


def external_at(location, offset="0"):
    m = one("escape", "Gather", [7, 3], None, 13,
            inits=[numpy_helper.from_array(np.arange(4, dtype=np.int64), "indices")])
    t = m.graph.initializer[0]
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", "32")):
        e = t.external_data.add()
        e.key, e.value = k, v
    return m


# external data out of the model's folder (OUT/escape), to a file that is
# there (OUT/outside.bin), so that only the path can be what refuses it
with open(os.path.join(OUT, "outside.bin"), "wb") as f:
    f.write(np.arange(4, dtype=np.int64).tobytes())
os.symlink("../outside.bin", os.path.join(ESCAPE, "link.bin"))
bad_model("escape/escape_dotdot.onnx", external_at("../outside.bin"), "refused",
          "leaves the model's folder")
bad_model("escape/escape_absolute.onnx",
          external_at(os.path.abspath(os.path.join(OUT, "outside.bin"))),
          "refused", "leaves the model's folder")
bad_model("escape/escape_link.onnx", external_at("link.bin"), "refused",
          "leads out of the model's")
bad_model("external_short.onnx", external_at("external.bin", "64"), "refused",
          "holds no 32 bytes at offset 64")
# an entry given twice: ONNX's loader (ExternalDataInfo) and ONNX Runtime take
# the last, so the indices are 0, 9, 1, 2 (9 outside [-7, 7)), not the
# first offset's 0..3, which tensorjit once read and passed
with open(os.path.join(OUT, "twice.bin"), "wb") as f:
    f.write(np.array([0, 1, 2, 3, 0, 9, 1, 2], dtype=np.int64).tobytes())
twice = external_at("twice.bin", "0")
e = twice.graph.initializer[0].external_data.add()
e.key, e.value = "offset", "32"
bad_model("external_key_twice.onnx", twice, "refused", "hold 9 at position 1, outside [-7, 7)")
bad_model("const_out_of_range.onnx", one("c", "Gather", [5, 2], None, 13, inits=[
    numpy_helper.from_array(np.array([0, 5], dtype=np.int64), "indices")]), "refused",
    "hold 5 at position 1, outside [-5, 5)")
bad_model("minmax_at_16.onnx", one("m", "ScatterND", [8, 3], [4, 1], 16, updates=[4, 3],
                                   reduction="max"), "refused", "comes with opset 18")
bad_model("reduction_at_13.onnx", one("r", "ScatterElements", [3, 3], [1, 3], 13,
                                      updates=[1, 3], reduction="add"), "refused",
          "attribute reduction is not ScatterElements's in opset 13")
bad_model("batch_dims_at_11.onnx", one("b", "GatherND", [2, 3], [2, 1], 11, batch_dims=1),
          "refused", "attribute batch_dims is not GatherND's in opset 11")
bad_model("bad_reduction.onnx", one("x", "ScatterND", [8, 3], [4, 1], 18, updates=[4, 3],
                                    reduction="mean"), "refused", "reduction 'mean' is not one")
bad_model("axis_out_of_range.onnx", one("a", "Gather", [5, 6], [2], 13, axis=2), "refused",
          "axis")
bad_model("wrong_output.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="w", axis=0)],
    [vi("data", F, [5, 6]), vi("indices", I64, [2])], [vi("out", F, [3, 6])], 13),
    "refused", "contradicts the file's [3,6]")
bad_model("no_shape.onnx", model(
    [helper.make_node("Relu", ["data"], ["r"]),
     helper.make_node("Gather", ["r", "indices"], ["out"], name="n", axis=0)],
    [vi("data", F, [5, 6]), vi("indices", I64, [2])], [vi("out", F, None)], 13),
    "skipped", "input 0 (data) 'r': the file states no type or shape for it (no value_info, "
    "graph input, output or initializer names it: onnx.shape_inference.infer_shapes adds them)")
bad_model("string_data.onnx", one("s", "Gather", [5], [2], 13, dtype=TensorProto.STRING),
          "skipped", "ONNX element type STRING (8)")
bad_model("complex_data.onnx", one("cx", "Gather", [5], [2], 13, dtype=TensorProto.COMPLEX128),
          "skipped", "ONNX element type COMPLEX128 (15)")
bad_model("float8_indices.onnx", one("f8", "Gather", [5], [2], 13, idx_type=17), "skipped",
          "ONNX element type FLOAT8E4M3FN (17)")
seq_in = helper.make_tensor_sequence_value_info("data", F, None)
bad_model("sequence_data.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="sq")],
    [seq_in, vi("indices", I64, [3])], [vi("out", F, None)], 13), "refused",
    "'data' is no tensor (a sequence, map, optional or sparse type)")
# the checker refuses a repeated attribute; shape inference takes the last
twice = helper.make_node("Gather", ["data", "indices"], ["out"], name="at", axis=1)
twice.attribute.append(helper.make_attribute("axis", 0))
bad_model("axis_twice.onnx", model(
    [twice], [vi("data", F, [5, 2]), vi("indices", I64, [3])], [vi("out", F, None)], 13),
    "refused", "attribute 'axis' appears more than once")
# opset 10 defines no negative index; torch writes x[-1] so and ONNX Runtime wraps it
save("negative_const_at_10.onnx", one("n10", "Gather", [5, 2], None, 10, inits=[
    numpy_helper.from_array(np.array([0, -1], dtype=np.int64), "indices")]))
bad_model("negative_dim.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="nd")],
    [vi("data", F, [5, -2]), vi("indices", I64, [2])], [vi("out", F, None)], 13),
    "refused", "dim 1 is -2, not a size")
bad_model("opset_22.onnx", one("o", "Gather", [5, 6], [2], 22), "skipped",
          "opset 22 is newer than 21")
bad_model("gatherelements_at_10.onnx", one("g", "GatherElements", [5, 6], [5, 6], 10),
          "refused", "ONNX GatherElements comes with opset 11; the model imports opset 10")
bad_model("axis_as_float.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="af", axis=1.0)],
    [vi("data", F, [5, 6]), vi("indices", I64, [2])], [vi("out", F, None)], 13),
    "refused", "attribute axis is not an INT")
bad_model("gather_batch_dims.onnx", one("gb", "Gather", [5, 6], [2], 13, batch_dims=1),
          "refused", "attribute batch_dims is not Gather's in any opset")
bad_model("u8_indices.onnx", one("u8", "Gather", [5, 6], [2], 13, idx_type=U8), "refused",
          "is u8: ONNX's Gather takes int32 or int64 indices")
# GatherND's and ScatterND's indices are int64 in every opset (no Tind):
# ONNX's checker (full_check) and ONNX Runtime refuse int32 there
bad_model("gathernd_i32_indices.onnx", one("gi32", "GatherND", [5, 6], [2, 1], 13,
                                           idx_type=I32), "refused",
          "input 1 (indices) 'indices' is i32: ONNX's GatherND takes int64 indices")
bad_model("scatternd_i32_const_indices.onnx", one(
    "si32", "ScatterND", [5, 6], None, 16, updates=[2, 6],
    inits=[helper.make_tensor("indices", I32, [2, 1], [0, -1])]), "refused",
    "is i32: ONNX's ScatterND takes int64 indices")
bad_model("untyped_indices.onnx", one("ut", "Gather", [5, 6], [2], 13,
                                      idx_type=TensorProto.UNDEFINED), "skipped",
          "the file states no element type for it")
# payloads and declarations that contradict the dims or each other
short = helper.make_tensor("data", F, [5, 2], [0.0] * 10)
del short.float_data[3:]
bad_model("short_data.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="sd")],
    [vi("indices", I64, [2])], [vi("out", F, None)], 13, inits=[short]), "refused",
    "'data' holds 3 values in float_data; its dims need 10")
far = helper.make_tensor("data", F, [5, 2], [0.0] * 10)
far.ClearField("float_data")
far.data_location = TensorProto.EXTERNAL
for k, v in (("location", "nowhere.bin"), ("length", "40")):
    e = far.external_data.add()
    e.key, e.value = k, v
bad_model("missing_external_data.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="me")],
    [vi("indices", I64, [2])], [vi("out", F, None)], 13, inits=[far]), "refused",
    "external data 'nowhere.bin' of 'data'")
bad_model("input_vs_initializer.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="iv")],
    [vi("data", F, [5, 2]), vi("indices", I32, [3])], [vi("out", F, None)], 13,
    inits=[numpy_helper.from_array(np.arange(4, dtype=np.int64), "indices")]), "refused",
    "is declared i32 [3] by the graph input but its initializer (the default value) is i64 [4]")
bad_model("three_inputs.onnx", model(
    [helper.make_node("Gather", ["data", "indices", "indices"], ["out"], name="ti")],
    [vi("data", F, [5, 2]), vi("indices", I64, [3])], [vi("out", F, None)], 13), "refused",
    "ONNX Gather takes 2 inputs; the node has 3")
bad_model("unknown_attribute.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="ua", axsi=1)],
    [vi("data", F, [5, 2]), vi("indices", I64, [3])], [vi("out", F, None)], 13), "refused",
    "attribute 'axsi' is not one of ONNX Gather's (axis)")
bad_model("no_output.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], [], name="no")],
    [vi("data", F, [5, 2]), vi("indices", I64, [3])], [vi("out", F, None)], 13), "refused",
    "ONNX Gather has one output; the node has none")
sparse_values = numpy_helper.from_array(np.array([1], dtype=np.int64), "indices")
sparse = helper.make_sparse_tensor(sparse_values,
                                   numpy_helper.from_array(np.array([0], dtype=np.int64)), [2])
sg = helper.make_graph([helper.make_node("Gather", ["data", "indices"], ["out"], name="sp")],
                       "g", [vi("data", F, [5, 2])], [vi("out", F, None)],
                       sparse_initializer=[sparse])
bad_model("sparse_indices.onnx", helper.make_model(
    sg, opset_imports=[helper.make_opsetid("", 13)]), "skipped",
    "'indices' is a sparse tensor (a sparse_initializer or a Constant's sparse_value)")
noimport = one("ni", "Gather", [5, 2], [3], 13)
del noimport.opset_import[:]
noimport.opset_import.append(helper.make_opsetid("com.example", 1))
bad_model("no_onnx_import.onnx", noimport, "refused",
          "the model imports no ai.onnx opset (opset_import), which its Gather node belongs to")
fn = helper.make_function("local", "pick", ["d", "i"], ["o"],
                          [helper.make_node("Gather", ["d", "i"], ["o"], name="in_fn")],
                          [helper.make_opsetid("", 13)])
fm = model([helper.make_node("pick", ["data", "indices"], ["out"], domain="local")],
           [vi("data", F, [5, 2]), vi("indices", I64, [3])], [vi("out", F, None)], 13)
fm.opset_import.append(helper.make_opsetid("local", 1))
fm.functions.append(fn)
bad_model("function_gather.onnx", fm, "skipped",
          "in local function 'pick' (ModelProto.functions)")
# cycles: ONNX Runtime refuses such a graph ("the graph is not acyclic"), the
# checker too (not sorted); refused whole, naming a node on the cycle and the
# value that closes it
bad_model("cycle.onnx", model(
    [helper.make_node("Relu", ["y"], ["x"], name="A"),
     helper.make_node("Gather", ["x", "indices"], ["y"], name="B", axis=0)],
    [vi("indices", I64, [2])], [vi("y", F, None)], 13, value_info=[vi("x", F, [4, 4])]),
    "error", "the graph has a cycle of 2 nodes: node 'A' (Relu) reads 'y' from node 'B' "
    "(Gather), which depends on the output of 'A' itself")
bad_model("self_cycle.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="ok", axis=0),
     helper.make_node("Add", ["data", "s"], ["s"], name="S")],
    [vi("data", F, [4, 4]), vi("indices", I64, [2])], [vi("out", F, None), vi("s", F, None)],
    13), "error", "the graph has a cycle: node 'S' (Add) reads 's', its own output")
# inside a Loop's body, whose nodes read outer values too (data, indices:
# computed before the Loop runs, no edge of the body)
cyclic_body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     helper.make_node("Gather", ["data", "indices"], ["gd"], name="outer_reader", axis=0),
     helper.make_node("Relu", ["q"], ["p"], name="P"),
     helper.make_node("Add", ["p", "x_in"], ["q"], name="Q"),
     helper.make_node("Identity", ["q"], ["x_out"])],
    "body", [vi("i", I64, []), vi("c_in", TensorProto.BOOL, []), vi("x_in", F, [4, 4])],
    [vi("c_out", TensorProto.BOOL, []), vi("x_out", F, [4, 4])])
bad_model("body_cycle.onnx", model(
    [helper.make_node("Relu", ["data"], ["x0"]),
     helper.make_node("Loop", ["trip", "", "x0"], ["xl"], name="loop", body=cyclic_body)],
    [vi("trip", I64, []), vi("data", F, [4, 4]), vi("indices", I64, [2])],
    [vi("xl", F, None)], 16), "error",
    "cycle of 2 nodes: node 'loop/body/P' (Relu) reads 'q' from node 'loop/body/Q' (Add)")
# through a body: the If's branch reads z, which `late` computes from the If's
# own output (ONNX Runtime makes z an implicit input of the If, an edge)
z_then = helper.make_graph([helper.make_node("Identity", ["z"], ["t"])], "then", [],
                           [vi("t", F, None)])
z_else = helper.make_graph([helper.make_node("Identity", ["data"], ["e"])], "else", [],
                           [vi("e", F, None)])
bad_model("body_read_cycle.onnx", model(
    [helper.make_node("If", ["cond"], ["y"], name="if", then_branch=z_then, else_branch=z_else),
     helper.make_node("Gather", ["y", "indices"], ["z"], name="late", axis=0)],
    [vi("cond", TensorProto.BOOL, []), vi("data", F, [4, 4]), vi("indices", I64, [4])],
    [vi("z", F, None)], 16), "error",
    "cycle of 2 nodes: node 'if' (If) reads 'z' in a body from node 'late' (Gather), which "
    "depends on the output of 'if' itself")
# a name defined twice in one graph: refused whole, as ONNX Runtime refuses
# it ("Duplicate definition of name") and ONNX's checker (SSA form); the
# message names the value, both definitions and the graph
bad_model("twice.onnx", model(
    [helper.make_node("Relu", ["data"], ["y"], name="A"),
     helper.make_node("Gather", ["data", "indices"], ["y"], name="B", axis=0)],
    [vi("data", F, [4, 4]), vi("indices", I64, [2])], [vi("y", F, None)], 13), "error",
    "'y' is defined twice in the main graph: node 'A' (Relu) outputs it, and node 'B' "
    "(Gather) outputs it too")
bad_model("twice_one_node.onnx", model(
    [helper.make_node("Split", ["data"], ["s", "s"], name="S", axis=0),
     helper.make_node("Gather", ["s", "indices"], ["out"], name="G", axis=0)],
    [vi("data", F, [4, 4]), vi("indices", I64, [2])], [vi("out", F, None)], 13), "error",
    "'s' is defined twice in the main graph: node 'S' (Split) outputs it twice")
bad_model("twice_input.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="G", axis=0),
     helper.make_node("Relu", ["out"], ["data"], name="R")],
    [vi("data", F, [4, 4]), vi("indices", I64, [2])], [vi("out", F, None)], 13), "error",
    "'data' is defined twice in the main graph: it is a graph input, and node 'R' (Relu) "
    "outputs it too")
# an input with an initializer of its name is one definition, its default
# value; a node output of that name is a second
bad_model("twice_defaulted.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["indices"], name="G", axis=0)],
    [vi("data", F, [4, 4]), vi("indices", I64, [2])], [vi("indices", F, None)], 13,
    inits=[numpy_helper.from_array(np.array([0, 1], dtype=np.int64), "indices")]), "error",
    "'indices' is defined twice in the main graph: it is a graph input, with an initializer "
    "as its default value, and node 'G' (Gather) outputs it too")
# a Constant named like an initializer: ONNX Runtime turns Constants into
# initializers and reads the last of two (a warning); tensorjit's lookup
# would read the first, so it refuses, as ONNX's checker does
bad_model("twice_constant.onnx", model(
    [helper.make_node("Constant", [], ["idx"], name="C",
                      value=numpy_helper.from_array(np.array([3, 3], dtype=np.int64))),
     helper.make_node("Gather", ["data", "idx"], ["out"], name="G", axis=0)],
    [vi("data", F, [4, 4])], [vi("out", F, None)], 13,
    inits=[numpy_helper.from_array(np.array([0, 1], dtype=np.int64), "idx")]), "error",
    "'idx' is defined twice in the main graph: it is an initializer, and node 'C' (Constant) "
    "outputs it too")
bad_model("twice_graph_input.onnx", model(
    [helper.make_node("Gather", ["data", "indices"], ["out"], name="G", axis=0)],
    [vi("data", F, [4, 4]), vi("indices", I64, [2]), vi("data", F, [4, 4])],
    [vi("out", F, None)], 13), "error",
    "'data' is defined twice in the main graph: it is listed twice as a graph input")
bad_model("twice_initializer.onnx", model(
    [helper.make_node("Gather", ["data", "idx"], ["out"], name="G", axis=0)],
    [vi("data", F, [4, 4])], [vi("out", F, None)], 13,
    inits=[numpy_helper.from_array(np.array([0, 1], dtype=np.int64), "idx"),
           numpy_helper.from_array(np.array([3, 3], dtype=np.int64), "idx")]), "error",
    "'idx' is defined twice in the main graph: two initializers (dense or sparse) have it")
# inside a Loop's body, and a body's node output named like a value of the
# graphs around it (ONNX's IR: "distinct from the names from the outer
# scopes"): a main graph's node output, and a main graph input seen from an
# If's branch inside a Loop's body
twice_body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     helper.make_node("Relu", ["x_in"], ["p"], name="P1"),
     helper.make_node("Gather", ["x_in", "indices"], ["p"], name="P2", axis=0),
     helper.make_node("Identity", ["p"], ["x_out"])],
    "body", [vi("i", I64, []), vi("c_in", TensorProto.BOOL, []), vi("x_in", F, [4, 4])],
    [vi("c_out", TensorProto.BOOL, []), vi("x_out", F, [4, 4])])
bad_model("twice_in_body.onnx", model(
    [helper.make_node("Loop", ["trip", "", "data"], ["xl"], name="loop", body=twice_body)],
    [vi("trip", I64, []), vi("data", F, [4, 4]), vi("indices", I64, [2])],
    [vi("xl", F, None)], 16), "error",
    "'p' is defined twice in body 'loop/body': node 'loop/body/P1' (Relu) outputs it, and node "
    "'loop/body/P2' (Gather) outputs it too")
h_then = helper.make_graph([helper.make_node("Gather", ["data", "indices"], ["h"], name="T",
                                             axis=0)], "then", [], [vi("h", F, None)])
h_else = helper.make_graph([helper.make_node("Identity", ["data"], ["e"])], "else", [],
                           [vi("e", F, None)])
redefines_why = ("'h' is defined twice: node 'if/then_branch/T' (Gather) of body "
                 "'if/then_branch' outputs it, and the main graph around that body defines it "
                 "too: node 'H' (Relu) outputs it")
h_nodes = [helper.make_node("Relu", ["data"], ["h"], name="H"),
           helper.make_node("If", ["cond"], ["y"], name="if", then_branch=h_then,
                            else_branch=h_else)]
h_io = ([vi("cond", TensorProto.BOOL, []), vi("data", F, [4, 4]), vi("indices", I64, [4])],
        [vi("y", F, None), vi("h", F, None)])
bad_model("body_redefines.onnx", model(h_nodes, *h_io, 16), "error", redefines_why)
# the same with `H` after the If: ONNX's checker, in one pass in the file's
# order, and ONNX Runtime, in its sorted order, have not seen `h` yet when
# they check the branch, and read it; tensorjit reads nodes in any order and
# holds to the IR's rule wherever the outer value is computed
bad_model("body_redefines_later.onnx", model(h_nodes[::-1], *h_io, 16), "error", redefines_why)
in_then = helper.make_graph([helper.make_node("Relu", ["x_in"], ["data"], name="T")], "then",
                            [], [vi("data", F, None)])
in_else = helper.make_graph([helper.make_node("Identity", ["x_in"], ["e"])], "else", [],
                            [vi("e", F, None)])
outer_body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     helper.make_node("If", ["c_in"], ["x_out"], name="inner", then_branch=in_then,
                      else_branch=in_else)],
    "body", [vi("i", I64, []), vi("c_in", TensorProto.BOOL, []), vi("x_in", F, [4, 4])],
    [vi("c_out", TensorProto.BOOL, []), vi("x_out", F, [4, 4])])
bad_model("body_redefines_input.onnx", model(
    [helper.make_node("Loop", ["trip", "", "data"], ["xl"], name="loop", body=outer_body)],
    [vi("trip", I64, []), vi("data", F, [4, 4])], [vi("xl", F, None)], 16), "error",
    "'data' is defined twice: node 'loop/body/inner/then_branch/T' (Relu) of body "
    "'loop/body/inner/then_branch' outputs it, and the main graph around that body defines it "
    "too: it is a graph input")
# two nodes of one name: ONNX Runtime refuses them ("two nodes with same node
# name"; ONNX's checker does not look), per graph
bad_model("two_nodes_one_name.onnx", model(
    [helper.make_node("Relu", ["data"], ["r"], name="G"),
     helper.make_node("Gather", ["r", "indices"], ["out"], name="G", axis=0)],
    [vi("data", F, [4, 4]), vi("indices", I64, [2])], [vi("out", F, None)], 13), "error",
    "two nodes of the main graph are named 'G': the 1st (Relu) and the 2nd (Gather) in its list")
# bodies in bodies in bodies, deeper than the reader takes
leaf = helper.make_graph([helper.make_node("Identity", ["c"], ["d0"])], "leaf", [],
                         [vi("d0", F, None)])
g = leaf
for depth in range(40):
    g = helper.make_graph([helper.make_node("If", ["c"], [f"d{depth + 1}"], then_branch=g,
                                            else_branch=leaf)], f"g{depth}", [],
                          [vi(f"d{depth + 1}", F, None)])
deep = helper.make_model(helper.make_graph(g.node, "deep", [vi("c", TensorProto.BOOL, [])],
                                           list(g.output)),
                         opset_imports=[helper.make_opsetid("", 13)])
bad_model("deep.onnx", deep, "error", "nest deeper than")

with open(os.path.join(OUT, "expected.tsv"), "w") as f:
    for row in expected:
        f.write("\t".join(row) + "\n")
with open(os.path.join(OUT, "bad.tsv"), "w") as f:
    for row in bad:
        f.write("\t".join(row) + "\n")
