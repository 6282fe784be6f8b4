"""The evaluation's embedding cache: a text the model embedded once comes back from the file, identical, and only
for the same model and dimensions; an unreadable file is set aside, not fatal."""

from __future__ import annotations

import logging
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rapport.evaluation.embedding_cache import CachedEmbedder, EmbeddingFile, model_identity


class CountingEmbedder:
    """A stand-in model that records every text it is asked to embed."""

    def __init__(self, name: str = "model-a", dimensions: int = 3, scale: float = 1.0) -> None:
        self._name = name
        self._dimensions = dimensions
        self._scale = scale
        self.asked: list[str] = []

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def name(self) -> str:
        return self._name

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.asked.extend(texts)
        # float64 values float32 cannot hold (0.1 * n): the cache must give them back unrounded.
        return [[self._scale * 0.1 * (len(t) + i) for i in range(self._dimensions)] for t in texts]


def cached(path: Path, model: CountingEmbedder) -> CachedEmbedder:
    return CachedEmbedder(model, EmbeddingFile(path, model_identity(model, packages=()), model.dimensions))


def test_a_second_run_reads_the_vectors_the_first_one_embedded(tmp_path: Path) -> None:
    # Given a first run that embedded two texts
    path = tmp_path / "vectors.sqlite3"
    first_model = CountingEmbedder()
    first = cached(path, first_model)
    expected = first.embed(["hello", "a longer text"])
    first.close()

    # When a second run, with a fresh model, asks for them again beside a new text
    second_model = CountingEmbedder()
    second = cached(path, second_model)
    got = second.embed(["a longer text", "new", "hello", "new"])

    # Then only the new text reaches the model, once, and the cached vectors are exactly the model's
    assert second_model.asked == ["new"]
    assert got[0] == expected[1] and got[2] == expected[0]
    assert got[1] == got[3] == CountingEmbedder().embed(["new"])[0]
    assert second.report()["texts_from_cache"] == 3 and second.report()["texts_embedded"] == 1


def test_a_miss_embeds_each_new_text_once_and_keeps_the_order(tmp_path: Path) -> None:
    model = CountingEmbedder()
    embedder = cached(tmp_path / "v.sqlite3", model)
    vectors = embedder.embed(["b", "aa", "b"])
    assert model.asked == ["b", "aa"]
    assert vectors == [model.embed(["b"])[0], model.embed(["aa"])[0], model.embed(["b"])[0]]
    assert embedder.name == "model-a" and embedder.dimensions == 3  # the product sees the model itself


def test_a_caller_changing_its_vector_does_not_change_the_next_callers(tmp_path: Path) -> None:
    embedder = cached(tmp_path / "v.sqlite3", CountingEmbedder())
    embedder.embed(["x"])[0][0] = 99.0
    assert embedder.embed(["x"])[0][0] != 99.0


@pytest.mark.parametrize(
    "other",
    [
        CountingEmbedder(name="model-b", scale=2.0),  # another model, same size
        CountingEmbedder(name="model-a", dimensions=4, scale=2.0),  # same name, other dimensions
    ],
)
def test_vectors_of_another_model_or_size_are_never_served(tmp_path: Path, other: CountingEmbedder) -> None:
    path = tmp_path / "shared.sqlite3"
    cached(path, CountingEmbedder()).embed(["hello"])

    embedder = cached(path, other)
    vector = embedder.embed(["hello"])[0]

    assert other.asked == ["hello"]  # a miss: the other model embeds it itself
    assert (
        len(vector) == other.dimensions
        and vector == CountingEmbedder(other.name, other.dimensions, 2.0).embed(["hello"])[0]
    )


def test_another_version_of_the_same_model_is_another_key() -> None:
    model = CountingEmbedder()
    assert model_identity(model, packages=()) == "model-a|dimensions=3"
    assert model_identity(model, packages=("pytest",)).startswith("model-a|dimensions=3|pytest=")
    assert model_identity(model, packages=("no-such-package-here",)) == "model-a|dimensions=3"


class ForwardPassEmbedder(CountingEmbedder):
    """The same weights run another way (the MiniLM embedder's own forward pass): floats differ in the last bits."""

    @property
    def computation(self) -> str:
        return "forward=own-pass-v1"


def test_another_computation_of_the_same_model_is_another_key(tmp_path: Path) -> None:
    # Given vectors cached by the model run one way
    path = tmp_path / "vectors.sqlite3"
    first = cached(path, CountingEmbedder())
    first.embed(["hello"])
    first.close()

    # When the same model, run another way, embeds the same text
    other = ForwardPassEmbedder()
    second = cached(path, other)
    second.embed(["hello"])

    # Then it is a miss: the model is asked, not the file
    assert model_identity(other, packages=()) == "model-a|dimensions=3|forward=own-pass-v1"
    assert other.asked == ["hello"]


def test_an_unreadable_file_is_set_aside_and_the_run_goes_on(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "vectors.sqlite3"
    path.write_bytes(b"this is not a database, it is a truncated download" * 100)

    with caplog.at_level(logging.WARNING):
        model = CountingEmbedder()
        embedder = cached(path, model)
    vector = embedder.embed(["hello"])[0]

    assert model.asked == ["hello"] and vector == CountingEmbedder().embed(["hello"])[0]
    assert (tmp_path / "vectors.sqlite3.corrupt").read_bytes().startswith(b"this is not a database")
    assert "unreadable" in caplog.text
    embedder.close()
    assert cached(path, CountingEmbedder()).embed(["hello"]) == [vector]  # the new file works


def test_a_damaged_row_is_a_miss_not_a_wrong_vector(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite3"
    cached(path, CountingEmbedder()).close()
    cached(path, CountingEmbedder()).embed(["hello", "world"])
    with sqlite3.connect(path) as db:
        db.execute("UPDATE vectors SET vector = x'0000'")  # cut short
    model = CountingEmbedder()
    assert cached(path, model).embed(["hello", "world"]) == CountingEmbedder().embed(["hello", "world"])
    assert model.asked == ["hello", "world"]


def test_a_model_returning_the_wrong_size_is_refused(tmp_path: Path) -> None:
    class Short(CountingEmbedder):
        def embed(self, texts: list[str]) -> list[list[float]]:
            return [[1.0] for _ in texts]

    with pytest.raises(ValueError, match="1 dimensions, not 3"):
        cached(tmp_path / "v.sqlite3", Short()).embed(["x"])


def test_the_product_may_embed_from_its_worker_threads(tmp_path: Path) -> None:
    # The file is opened on this thread; the pipeline and enrichment embed from theirs.
    model = CountingEmbedder()
    embedder = cached(tmp_path / "v.sqlite3", model)
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda n: embedder.embed([f"text {n % 5}"]), range(40)))
    assert sorted(set(model.asked)) == [f"text {n}" for n in range(5)] and len(model.asked) == 5
    assert all(vector == model.embed([f"text {n % 5}"]) for n, vector in enumerate(results))


def test_without_a_file_the_cache_lives_for_the_run_alone() -> None:
    model = CountingEmbedder()
    embedder = CachedEmbedder(model)
    embedder.embed(["a"])
    embedder.embed(["a", "b"])
    assert model.asked == ["a", "b"]
    assert embedder.report()["file"] is None
