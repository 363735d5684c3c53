"""Build an ONNX graph of a BERT sentence encoder straight from its safetensors weights.

Why: the model package ships safetensors only, and exporting through torch would pull in
~1 GiB of dependencies.  BERT is a short, regular graph, so we write it with the ``onnx``
helper API: embeddings + N x (fused attention, skip-layernorm, bias-GELU, skip-layernorm),
then mean pooling over the attention mask and L2 normalisation inside the graph.  The
``com.microsoft`` fused ops keep the arithmetic of the reference (exact erf GELU, the same
LayerNorm epsilon); ``fused=False`` writes the same maths with standard ONNX ops only
(used by the benchmark as a baseline and as a cross-check).

Inputs: ``input_ids`` and ``attention_mask``, int64 ``(batch, seq)``.
Output: ``embeddings``, float32 ``(batch, hidden)``, unit rows.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

__all__ = ["GRAPH_VERSION", "BertConfig", "build_graph", "read_config", "read_safetensors"]

GRAPH_VERSION = "g1"
"""Part of the cache key: bump whenever the graph this module writes changes."""

_ST_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


class BertConfig:
    """The few ``config.json`` fields the graph depends on."""

    def __init__(self, hidden: int, heads: int, layers: int, eps: float) -> None:
        self.hidden, self.heads, self.layers, self.eps = hidden, heads, layers, eps


def read_config(model_dir: Path) -> BertConfig:
    """Read and sanity-check ``config.json`` (only plain BERT with exact GELU is supported)."""
    cfg = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if cfg.get("model_type", "bert") != "bert" or cfg.get("hidden_act", "gelu") != "gelu":
        raise ValueError(f"{model_dir}: only BERT models with exact GELU are supported, got "
                         f"model_type={cfg.get('model_type')!r} hidden_act={cfg.get('hidden_act')!r}")
    return BertConfig(int(cfg["hidden_size"]), int(cfg["num_attention_heads"]),
                      int(cfg["num_hidden_layers"]), float(cfg.get("layer_norm_eps", 1e-12)))


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Memory-map a .safetensors file (8-byte header size, JSON header, raw little-endian data).

    Why not the ``safetensors`` package: the format is trivial and this keeps a dependency out.
    """
    import numpy as np

    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header: dict[str, Any] = json.loads(f.read(n))
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    base = 8 + n
    out: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        dtype = np.dtype(_ST_DTYPES[info["dtype"]])
        out[name] = raw[base + start:base + end].view(dtype).reshape(info["shape"])
    return out


def build_graph(weights: dict[str, np.ndarray], cfg: BertConfig, *, fused: bool = True) -> Any:
    """Return an ``onnx.ModelProto`` computing normalised mean-pooled sentence embeddings."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    H, heads, eps = cfg.hidden, cfg.heads, cfg.eps
    dh = H // heads
    inits: list[Any] = []
    nodes: list[Any] = []
    f32 = np.float32

    def const(name: str, arr: Any) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(arr), name))
        return name

    def op(kind: str, inputs: list[str], output: str, ms: bool = False, **attrs: Any) -> str:
        nodes.append(helper.make_node(kind, inputs, [output], name=output,
                                      domain="com.microsoft" if ms else None, **attrs))
        return output

    def w(name: str) -> np.ndarray:
        return np.asarray(weights[name], dtype=f32)

    # Embeddings: token_type_ids are always 0 for single sentences, so fold that row into
    # the word table; positions are 0..S-1, a slice of the position table.
    word = const("word_emb", w("embeddings.word_embeddings.weight")
                 + w("embeddings.token_type_embeddings.weight")[0])
    pos = const("pos_emb", w("embeddings.position_embeddings.weight"))
    const("i0", np.array([0], np.int64))
    const("i1", np.array([1], np.int64))
    op("Shape", ["input_ids"], "ids_shape")
    op("Gather", ["ids_shape", "i1"], "seq_len", axis=0)
    op("Slice", [pos, "i0", "seq_len", "i0"], "pos_slice")
    op("Gather", [word, "input_ids"], "tok_emb", axis=0)
    op("Add", ["tok_emb", "pos_slice"], "emb_sum")
    x = op("LayerNormalization", ["emb_sum", const("emb_ln_g", w("embeddings.LayerNorm.weight")),
                                  const("emb_ln_b", w("embeddings.LayerNorm.bias"))],
           "x_emb", axis=-1, epsilon=eps)
    op("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    if fused:
        op("Cast", ["attention_mask"], "mask_i32", to=TensorProto.INT32)
    else:
        const("f1", np.array(1.0, f32))
        const("fmin", np.array(np.finfo(f32).min, f32))
        const("ax12", np.array([1, 2], np.int64))
        op("Sub", ["f1", "mask_f"], "mask_inv")
        op("Mul", ["mask_inv", "fmin"], "mask_neg")
        op("Unsqueeze", ["mask_neg", "ax12"], "mask_bias")  # (B, 1, 1, S)
        const("shape_bshd", np.array([0, 0, heads, dh], np.int64))
        const("shape_bsh", np.array([0, 0, H], np.int64))
        const("scale", np.array(1.0 / np.sqrt(dh), f32))
        const("sqrt2", np.array(np.sqrt(2.0), f32))
        const("half", np.array(0.5, f32))

    for i in range(cfg.layers):
        p = f"encoder.layer.{i}."
        qkv = [(w(p + f"attention.self.{n}.weight"), w(p + f"attention.self.{n}.bias"))
               for n in ("query", "key", "value")]
        if fused:
            qkv_w = const(f"l{i}_qkv_w", np.concatenate([wt.T for wt, _ in qkv], axis=1))
            qkv_b = const(f"l{i}_qkv_b", np.concatenate([b for _, b in qkv]))
            ctx = op("Attention", [x, qkv_w, qkv_b, "mask_i32"], f"l{i}_ctx", ms=True,
                     num_heads=heads)
        else:
            heads_out = []
            for (wt, b), n, perm in zip(qkv, "qkv", ([0, 2, 1, 3], [0, 2, 3, 1], [0, 2, 1, 3]),
                                        strict=True):
                t = op("MatMul", [x, const(f"l{i}_{n}_w", wt.T)], f"l{i}_{n}_mm")
                t = op("Add", [t, const(f"l{i}_{n}_b", b)], f"l{i}_{n}_add")
                t = op("Reshape", [t, "shape_bshd"], f"l{i}_{n}_split")
                heads_out.append(op("Transpose", [t], f"l{i}_{n}_t", perm=perm))
            q, k, v = heads_out
            s = op("MatMul", [q, k], f"l{i}_scores")
            s = op("Mul", [s, "scale"], f"l{i}_scaled")
            s = op("Add", [s, "mask_bias"], f"l{i}_masked")
            s = op("Softmax", [s], f"l{i}_probs", axis=-1)
            c = op("MatMul", [s, v], f"l{i}_ctx_h")
            c = op("Transpose", [c], f"l{i}_ctx_t", perm=[0, 2, 1, 3])
            ctx = op("Reshape", [c, "shape_bsh"], f"l{i}_ctx")
        x = _dense_residual_ln(op, const, ctx, x, w, p + "attention.output.", f"l{i}_attn", eps,
                               fused)
        inter = op("MatMul", [x, const(f"l{i}_ff1_w", w(p + "intermediate.dense.weight").T)],
                   f"l{i}_ff1_mm")
        ff1_b = const(f"l{i}_ff1_b", w(p + "intermediate.dense.bias"))
        if fused:
            g = op("BiasGelu", [inter, ff1_b], f"l{i}_gelu", ms=True)  # exact erf GELU
        else:
            t = op("Add", [inter, ff1_b], f"l{i}_ff1_add")
            e = op("Div", [t, "sqrt2"], f"l{i}_gelu_div")
            e = op("Erf", [e], f"l{i}_gelu_erf")
            e = op("Add", [e, "f1"], f"l{i}_gelu_add")
            e = op("Mul", [t, e], f"l{i}_gelu_mul")
            g = op("Mul", [e, "half"], f"l{i}_gelu")
        x = _dense_residual_ln(op, const, g, x, w, p + "output.", f"l{i}_ff2", eps, fused)

    # Mean pooling over real tokens, then L2 normalisation (as sentence-transformers does).
    const("ax_last", np.array([-1], np.int64))
    op("Unsqueeze", ["mask_f", "ax_last"], "mask_3d")
    op("Mul", [x, "mask_3d"], "masked_tokens")
    op("ReduceSum", ["masked_tokens", "i1"], "token_sum", keepdims=0)
    op("ReduceSum", ["mask_f", "i1"], "token_count", keepdims=1)
    op("Max", ["token_count", const("tiny", np.array(1e-9, f32))], "token_count_c")
    op("Div", ["token_sum", "token_count_c"], "mean_pooled")
    op("LpNormalization", ["mean_pooled"], "embeddings", axis=-1, p=2)

    graph = helper.make_graph(
        nodes, "bert_sentence_encoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("embeddings", TensorProto.FLOAT, ["batch", H])],
        inits)
    model = helper.make_model(graph, producer_name="opencortex", opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8  # what onnxruntime >= 1.14 reads; opset 17 has LayerNormalization
    return model


def _dense_residual_ln(op: Any, const: Any, inp: str, residual: str, w: Any, prefix: str,
                       tag: str, eps: float, fused: bool) -> str:
    """``LayerNorm(inp @ W.T + b + residual)``: the tail of both BERT sub-blocks."""
    mm = op("MatMul", [inp, const(f"{tag}_w", w(prefix + "dense.weight").T)], f"{tag}_mm")
    b = const(f"{tag}_b", w(prefix + "dense.bias"))
    g = const(f"{tag}_ln_g", w(prefix + "LayerNorm.weight"))
    beta = const(f"{tag}_ln_b", w(prefix + "LayerNorm.bias"))
    if fused:
        return op("SkipLayerNormalization", [mm, residual, g, beta, b], f"{tag}_out", ms=True,
                  epsilon=eps)
    t = op("Add", [mm, b], f"{tag}_bias")
    t = op("Add", [t, residual], f"{tag}_res")
    return op("LayerNormalization", [t, g, beta], f"{tag}_out", axis=-1, epsilon=eps)
