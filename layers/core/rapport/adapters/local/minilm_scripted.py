"""MiniLM's forward pass as one TorchScript function, so that a pass holds the GIL once rather than once per op.

Written out eagerly (`minilm_forward.py`), a pass is some two hundred torch calls from Python, and each call takes
the GIL back before it starts. With another Python thread busy (graph enrichment, the other extraction, a server's
handler) each of those waits for the busy thread's switch interval: on two cores an interaction's three texts took
~50 ms in the local pipeline against ~16 ms alone, and a pass beside a thread that never sleeps took a hundred times
its own time. The TorchScript interpreter runs the whole pass without the GIL, so another thread costs it only its
share of the cores.

The same operations in the same order as the eager pass, so the vectors are the same bits (`minilm_forward.py`
checks the two equal on a probe when the model loads, and the tests on batches). No annotations are postponed here:
TorchScript reads them as types when it compiles the function.
"""

import logging
import warnings
from collections.abc import Callable

import torch
import torch.nn.functional as F  # noqa: N812 - torch's own idiom


def _dense(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    if x.dtype == weight.dtype:
        return torch.addmm(bias, x, weight)
    return torch.addmm(bias, x.to(weight.dtype), weight).to(x.dtype)


def mean_pooled_bert(
    input_ids: torch.Tensor,
    token_type_ids: torch.Tensor | None,
    attention_mask: torch.Tensor,
    embeddings: list[torch.Tensor],
    weights: list[torch.Tensor],
    heads: int,
    eps: float,
) -> torch.Tensor:
    """Unit vectors of a padded batch: `embeddings` are the word, token type and position tables and the embedding
    layer norm's weight and bias; `weights` are twelve per encoder layer, in this order: the fused Q/K/V product, the
    attention's output product, its layer norm, the intermediate product, the output product and its layer norm, each
    a weight (dense ones inputs x outputs) and a bias. What
    `MeanPooledBert._forward` computes (its comments say why each step is as it is)."""
    batch, length = input_ids.shape[0], input_ids.shape[1]
    positions = torch.arange(length).unsqueeze(0)
    types = token_type_ids if token_type_ids is not None else torch.zeros_like(input_ids)
    x = F.embedding(input_ids, embeddings[0]) + F.embedding(types, embeddings[1])
    x = x + F.embedding(positions, embeddings[2])
    hidden = x.shape[2]
    x = F.layer_norm(x, [hidden], embeddings[3], embeddings[4], eps)
    flat = x.reshape(batch * length, -1)
    real = attention_mask.reshape(-1).nonzero().squeeze(1)
    padded = batch > 1
    rows = flat[real] if padded else flat
    mask: torch.Tensor | None = None
    if padded:
        mask = attention_mask[:, None, None, :].to(torch.bool)
    for start in range(0, len(weights), 12):
        qkv = _dense(rows, weights[start], weights[start + 1])
        if padded:
            qkv = qkv.new_zeros(batch * length, qkv.shape[1]).index_copy_(0, real, qkv)
        parts = qkv.view(batch, length, 3, heads, -1).permute(2, 0, 3, 1, 4)
        context = F.scaled_dot_product_attention(parts[0], parts[1], parts[2], attn_mask=mask)
        context = context.transpose(1, 2).reshape(batch * length, -1)
        if padded:
            context = context[real]
        attended = _dense(context, weights[start + 2], weights[start + 3]) + rows
        rows = F.layer_norm(attended, [hidden], weights[start + 4], weights[start + 5], eps)
        inner = F.gelu(_dense(rows, weights[start + 6], weights[start + 7]))
        rows = F.layer_norm(
            _dense(inner, weights[start + 8], weights[start + 9]) + rows,
            [hidden],
            weights[start + 10],
            weights[start + 11],
            eps,
        )
    if padded:
        rows = rows.new_zeros(batch * length, rows.shape[1]).index_copy_(0, real, rows)
    x = rows.view(batch, length, -1)
    mean_weights = attention_mask.unsqueeze(-1).to(x.dtype)
    pooled = (x * mean_weights).sum(1) / mean_weights.sum(1).clamp(min=1e-9)
    return F.normalize(pooled, p=2.0, dim=1)


logger = logging.getLogger(__name__)

_Pass = Callable[
    [torch.Tensor, torch.Tensor | None, torch.Tensor, list[torch.Tensor], list[torch.Tensor], int, float],
    torch.Tensor,
]
_SCRIPTED: _Pass | None = None


def scripted() -> _Pass:
    """`mean_pooled_bert` compiled, once per process; the function itself where TorchScript cannot compile it.

    TorchScript is deprecated in favour of `torch.compile`, which needs a C compiler at run time and recompiles per
    shape, so it is no replacement here. Should a torch release drop or break `torch.jit.script`, the embedder keeps
    working with the same bits, only holding the GIL once per op again."""
    global _SCRIPTED
    if _SCRIPTED is None:
        try:
            with warnings.catch_warnings():
                # The deprecation is known and answered above; it says nothing a user can act on.
                warnings.simplefilter("ignore", DeprecationWarning)
                _SCRIPTED = torch.jit.script(mean_pooled_bert)
        except Exception as error:  # any failure to compile leaves the same function, run op by op
            logger.warning("MiniLM's pass could not be compiled (%s); it runs op by op, holding the GIL per op", error)
            _SCRIPTED = mean_pooled_bert
    return _SCRIPTED
