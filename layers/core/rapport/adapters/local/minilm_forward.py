"""MiniLM's forward pass written out over the loaded model's own weights: the query path's cost is the arithmetic.

`SentenceTransformer.encode` and the transformers `BertModel` around the same arithmetic spend about as long again
in Python for one short text (argument handling, modality checks, attention-mask building, output capture, the
pooler head sentence-transformers throws away): ~18 ms against ~9 ms for a question on one core. This runs the same
operations (embeddings, six encoder layers with SDPA attention, mean pooling, L2 normalisation) with Q, K and V as
one matrix product, on the tokens the model's own `preprocess` gives. Float results differ from `encode`'s in the
last bits only (cosine > 0.99999, checked against `encode` on a probe text when the model loads, and in the tests).
The arithmetic itself is one TorchScript function (`minilm_scripted.py`), so a pass holds the GIL to start and to
return only; this class holds the weights in the layout it takes and batches the texts.

The dense layers multiply by their weights stored transposed (input x output, contiguous), which is not how
`nn.Linear` keeps them: for the dozen rows of one question MKL's product then runs without repacking the weight
matrix on every call, about half the time of each of the 24 products at that size (`F.linear` took ~270 µs for the
384 → 1,536 layer on one core, this ~130 µs), and about the same at batch sizes (within a few per cent either way).

In bfloat16 (`precision`), the dense layers keep their weights in bfloat16 and multiply the rows converted to it,
accumulating in float32; everything else (embeddings, attention, layer norms, GELU, pooling) stays float32. Where
the CPU multiplies bfloat16 itself that is the hardware's own product: with AMX tiles (Intel since Sapphire Rapids)
a 384 → 1,536 product of an interaction's ~100 rows takes ~0.35 ms against ~1.2 ms; with AVX512-BF16's dot products
(AMD since Zen 4) 0.71 against 1.61 ms, and a whole question's pass 6.7 against 10.1 ms. Vectors stay within cosine
0.99997 of float32's (top-10 neighbours unchanged on the paraphrase set); the probe check holds it to
`_MIN_COSINE_BF16`. Without either, bfloat16 products are emulated and slower, so `auto` keeps float32 there
(docs/recall.md says which is the default, and why).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from rapport.adapters.local.thread_pools import across_cores, model_passes

if TYPE_CHECKING:
    import torch
    from sentence_transformers import SentenceTransformer

# Names the arithmetic below: the evaluation's vector cache keys on it (with the library versions), so vectors from
# another computation are a miss rather than served as this one's.
COMPUTATION = "forward=rapport-bert-mean-v2"
COMPUTATION_BF16 = f"{COMPUTATION}-bf16"
_PROBE = "A short probe sentence, checked against sentence-transformers when the model loads."
_MIN_COSINE = 0.99999
_MIN_COSINE_BF16 = 0.9999


def use_bfloat16(precision: str) -> bool:
    """Whether the dense layers run in bfloat16 for this setting (`EmbeddingPrecision`) on this CPU: for `auto`,
    where the CPU multiplies bfloat16 in hardware (AMX tiles, or AVX512-BF16's dot products)."""
    if precision == "float32":
        return False
    if precision == "bfloat16":
        return True
    import torch

    return bool(torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported())


def _transposed(weight: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A dense layer's weight from `nn.Linear`'s own layout (outputs x inputs) as inputs x outputs, contiguous, in
    `dtype` (why: the module's note)."""
    return weight.t().contiguous().to(dtype)


class MeanPooledBert:
    """A BERT encoder with mean pooling and L2 normalisation (what all-MiniLM-L6-v2 is), over `model`'s modules.

    `of` answers None for a model of any other shape, and the embedder then keeps calling `encode`."""

    def __init__(self, model: SentenceTransformer, *, bfloat16: bool = False) -> None:
        import torch

        from rapport.adapters.local.minilm_scripted import scripted

        self.bfloat16 = bfloat16
        dtype = torch.bfloat16 if bfloat16 else torch.float32
        transformer, _, _ = model
        # transformers' modules are typed as `Tensor | Module` attributes: this reads them as what they are.
        bert: Any = transformer.auto_model
        self._model = model
        self._heads = int(bert.config.num_attention_heads)
        embeddings = bert.embeddings
        self._eps = float(embeddings.LayerNorm.eps)
        self._embedding_tensors = [
            embeddings.word_embeddings.weight.detach(),
            embeddings.token_type_embeddings.weight.detach(),
            embeddings.position_embeddings.weight.detach(),
            embeddings.LayerNorm.weight.detach(),
            embeddings.LayerNorm.bias.detach(),
        ]
        weights: list[torch.Tensor] = []
        with torch.inference_mode():
            for layer in bert.encoder.layer:
                attention = layer.attention.self
                qkv_weight = torch.cat([attention.query.weight, attention.key.weight, attention.value.weight])
                qkv_bias = torch.cat([attention.query.bias, attention.key.bias, attention.value.bias])
                out, intermediate, output = layer.attention.output.dense, layer.intermediate.dense, layer.output.dense
                attention_norm, output_norm = layer.attention.output.LayerNorm, layer.output.LayerNorm
                if attention_norm.eps != self._eps or output_norm.eps != self._eps:
                    raise ValueError("the layer norms of this model differ in eps")
                weights += [
                    _transposed(qkv_weight, dtype),
                    qkv_bias.contiguous().to(dtype),
                    _transposed(out.weight, dtype),
                    out.bias.contiguous().to(dtype),
                    attention_norm.weight.detach(),
                    attention_norm.bias.detach(),
                    _transposed(intermediate.weight, dtype),
                    intermediate.bias.contiguous().to(dtype),
                    _transposed(output.weight, dtype),
                    output.bias.contiguous().to(dtype),
                    output_norm.weight.detach(),
                    output_norm.bias.detach(),
                ]
        self._weights = weights
        self._pass = scripted()

    @classmethod
    def of(cls, model: SentenceTransformer, *, bfloat16: bool = False) -> MeanPooledBert | None:
        """The fast pass over `model` when it is the shape written out here and agrees with `encode` on a probe."""
        if not _is_mean_pooled_bert(model):
            return None
        forward = cls(model, bfloat16=bfloat16)
        import numpy as np

        expected = model.encode([_PROBE], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        got = forward.embed([_PROBE], batch_size=1)
        if float(np.dot(expected[0], np.asarray(got[0]))) < (_MIN_COSINE_BF16 if bfloat16 else _MIN_COSINE):
            return None
        return forward

    def embed(self, texts: Sequence[str], batch_size: int) -> list[list[float]]:
        """Unit vectors, in order. As `encode` does: longest texts first, `batch_size` at a time, each batch padded
        to its longest, so padding is little. A batch of several texts is dealt, longest first, into `model_passes`
        parts that run at once, one per `model_threads` cores (`across_cores`): one pass takes half the cores, and
        a text's vector does not depend on the others in its pass, to the bit (each text's attention is its own and
        the dense layers' rows are the texts' tokens)."""
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        passes = model_passes()
        for start in range(0, len(order), batch_size):
            chosen = order[start : start + batch_size]
            dealt = [chosen[n::passes] for n in range(min(passes, len(chosen)))]
            features = [self._model.preprocess([texts[i] for i in part]) for part in dealt]
            results = across_cores([partial(self._forward_of, part_features) for part_features in features])
            for part, rows in zip(dealt, results, strict=True):
                for position, row in zip(part, rows.tolist(), strict=True):
                    vectors[position] = row
        return vectors

    def _forward_of(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        return self._forward(features["input_ids"], features.get("token_type_ids"), features["attention_mask"])

    def _forward(
        self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None, attention_mask: torch.Tensor
    ) -> torch.Tensor:
        """The embeddings, six encoder layers with SDPA attention, mean pooling and L2 normalisation, as one
        TorchScript call (`minilm_scripted.py`: a pass then holds the GIL once, not once per op). The dense layers
        multiply the real tokens of every text as the rows of one matrix, padding left out (a batch of mixed lengths
        is half padding); attention reads each text's own tokens, so it runs on them put back in their padded
        places. One text has no padding, and no mask lets SDPA take its unmasked kernel."""
        import torch

        # Unoptimised: the graph executor's passes would decompose `addmm` into a product and an add, which rounds
        # differently from the eager pass whose vectors the caches hold; the GIL is released either way.
        with torch.inference_mode(), torch.jit.optimized_execution(False):
            tables, weights = self._embedding_tensors, self._weights
            return self._pass(input_ids, token_type_ids, attention_mask, tables, weights, self._heads, self._eps)


def _is_mean_pooled_bert(model: Any) -> bool:
    """Transformer(BertModel, absolute positions, exact GELU) → Pooling(mean) → Normalize, and nothing else."""
    try:
        transformer, pooling, normalize = model
    except (TypeError, ValueError):
        return False
    bert = getattr(transformer, "auto_model", None)
    config = getattr(bert, "config", None)
    return (
        type(bert).__name__ == "BertModel"
        and getattr(config, "hidden_act", None) == "gelu"
        and getattr(config, "position_embedding_type", "absolute") == "absolute"
        and getattr(config, "_attn_implementation", None) in ("sdpa", "eager")
        and type(pooling).__name__ == "Pooling"
        and getattr(pooling, "pooling_mode", None) == "mean"
        and type(normalize).__name__ == "Normalize"
    )
