"""The core Lambda layer: the `rapport` package and its locked runtime dependencies, bundled locally without Docker."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = PROJECT_ROOT / "pyproject.toml"
CORE_SOURCE = PROJECT_ROOT / "layers" / "core"
PACKAGE_DIR = CORE_SOURCE / "rapport"
# `make lock`: [project].dependencies resolved for Lambda's platform, every file hashed (docs/deploy.md).
LOCK_FILE = CORE_SOURCE / "requirements.lock"

RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.ARM_64
PYTHON_VERSION = "3.12"
# Lambda's python3.12 runs on Amazon Linux 2023 (glibc 2.34): manylinux2014 wheels and the newer 2_28 ones both load.
PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_28_aarch64")
SOURCE_EXCLUDES = ["__pycache__", "*.pyc", "*.egg-info", "requirements.lock"]

# Where downloaded wheels are kept between synths, outside cdk.out (which `cdk synth` may wipe): `-c wheelhouse=…`
# or RAPPORT_WHEELHOUSE moves it, say onto a CI cache.
WHEELHOUSE_ENV = "RAPPORT_WHEELHOUSE"
DEFAULT_WHEELHOUSE = Path.home() / ".cache" / "rapport" / "wheelhouse"

# BundlingOptions requires an image, but local bundling below always succeeds or raises, so it never runs.
DOCKER_IMAGE_NEVER_USED = "public.ecr.aws/sam/build-python3.12:latest-arm64"

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")


@dataclass(frozen=True)
class Pin:
    name: str  # as PEP 503 normalizes it: lower case, runs of -_. as one -
    version: str


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_pins(lock_file: Path = LOCK_FILE) -> list[Pin]:
    """Every `name==version` of the lock: what the layer carries, and nothing else (it is installed `--no-deps`)."""
    pins = []
    for line in lock_file.read_text().splitlines():
        match = _PIN.match(line)
        if match:
            pins.append(Pin(_normalized(match.group(1)), match.group(2)))
    return pins


def wheel_pin(wheel: Path) -> Pin:
    """The distribution and version a wheel's file name states (`name-version-tags.whl`)."""
    name, version = wheel.name.split("-")[:2]
    return Pin(_normalized(name), version)


def lock_digest(lock_file: Path = LOCK_FILE) -> str:
    return hashlib.sha256(lock_file.read_bytes()).hexdigest()


def default_wheelhouse() -> Path:
    configured = os.environ.get(WHEELHOUSE_ENV)
    return Path(configured).expanduser() if configured else DEFAULT_WHEELHOUSE


def _platform_flags() -> list[str]:
    return [
        *(flag for platform in PLATFORMS for flag in ("--platform", platform)),
        "--implementation",
        "cp",
        "--python-version",
        PYTHON_VERSION,
        "--only-binary=:all:",
    ]


@jsii.implements(cdk.ILocalBundling)
class LockedLayerBundling:
    """Installs the lock's wheels for Lambda's platform with the local pip, then copies the core package beside them.

    Wheels come from the wheelhouse; only pins it lacks are downloaded (once), so a synth with a full wheelhouse
    makes no network request. Both steps check every file against the lock's hashes and install nothing the lock
    does not name (`--no-deps`).
    """

    def __init__(self, *, lock_file: Path, package_dir: Path, wheelhouse: Path, python: str = sys.executable) -> None:
        self._lock_file = lock_file
        self._package_dir = package_dir
        self._wheelhouse = wheelhouse
        self._python = python

    def missing_pins(self) -> list[Pin]:
        """Pins of the lock with no wheel of that version in the wheelhouse."""
        present = {wheel_pin(w) for w in self._wheelhouse.glob("*.whl")} if self._wheelhouse.is_dir() else set()
        return [pin for pin in locked_pins(self._lock_file) if pin not in present]

    def download_command(self) -> list[str]:
        """Fetches the lock's wheels for Lambda's platform into the wheelhouse (the one step that needs an index)."""
        return [
            self._python,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--disable-pip-version-check",
            "--require-hashes",
            "--no-deps",
            *_platform_flags(),
            "--dest",
            str(self._wheelhouse),
            "--requirement",
            str(self._lock_file),
        ]

    def install_command(self, target: Path) -> list[str]:
        """Installs the lock from the wheelhouse alone into `target`: no index is consulted."""
        return [
            self._python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",  # Lambda's file system is read-only; .pyc files for another interpreter are dead weight
            "--require-hashes",
            "--no-deps",
            "--no-index",
            "--find-links",
            str(self._wheelhouse),
            *_platform_flags(),
            "--target",
            str(target),
            "--requirement",
            str(self._lock_file),
        ]

    def try_bundle(self, output_dir: str, options: cdk.BundlingOptions) -> bool:
        """Build the layer into `output_dir`; raise rather than return False, so CDK never falls back to Docker.

        jsii calls this with the options struct as one positional argument (the generated stub spells it as
        keyword arguments, which is not what arrives at runtime).
        """
        if self.missing_pins():
            self._wheelhouse.mkdir(parents=True, exist_ok=True)
            self._run(self.download_command(), "downloading the locked wheels into " + str(self._wheelhouse))
        target = Path(output_dir) / "python"
        self._run(self.install_command(target), "installing the locked wheels")
        # Console scripts point at this machine's interpreter and nothing in Lambda runs them.
        shutil.rmtree(target / "bin", ignore_errors=True)
        shutil.copytree(
            self._package_dir,
            target / self._package_dir.name,
            ignore=shutil.ignore_patterns(*SOURCE_EXCLUDES),
            dirs_exist_ok=True,
        )
        return True

    @staticmethod
    def _run(command: list[str], step: str) -> None:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RuntimeError(
                f"Bundling the core layer failed {step} (pip exit {result.returncode}):\n{result.stderr}"
            )


class CoreLayer(Construct):
    """The one layer every Rapport function carries; with `skip_bundling` the raw source stands in (tests)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        skip_bundling: bool,
        lock_file: Path = LOCK_FILE,
        package_dir: Path = PACKAGE_DIR,
        wheelhouse: Path | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        configured = self.node.try_get_context("wheelhouse")
        wheelhouse = wheelhouse or (Path(str(configured)).expanduser() if configured else default_wheelhouse())
        code = (
            self._raw_code()
            if skip_bundling
            else self._bundled_code(lock_file=lock_file, package_dir=package_dir, wheelhouse=wheelhouse)
        )
        self.layer_version = lambda_.LayerVersion(
            self,
            "Layer",
            code=code,
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="rapport core package and its locked runtime dependencies",
        )

    @staticmethod
    def _raw_code() -> lambda_.Code:
        return lambda_.Code.from_asset(str(CORE_SOURCE), exclude=SOURCE_EXCLUDES)

    @staticmethod
    def _bundled_code(*, lock_file: Path, package_dir: Path, wheelhouse: Path) -> lambda_.Code:
        # The source tree and the lock's bytes (resolved versions and hashes) name the layer: the same pair always
        # yields the same asset, and a re-resolved dependency yields a new one. The wheelhouse's place does not count.
        asset_hash = layer_asset_hash(lock_file, package_dir)
        return lambda_.Code.from_asset(
            str(package_dir.parent),
            asset_hash=asset_hash,
            asset_hash_type=cdk.AssetHashType.CUSTOM,
            bundling=cdk.BundlingOptions(
                image=cdk.DockerImage.from_registry(DOCKER_IMAGE_NEVER_USED),
                local=LockedLayerBundling(  # type: ignore[arg-type]
                    lock_file=lock_file, package_dir=package_dir, wheelhouse=wheelhouse
                ),
            ),
        )


def layer_asset_hash(lock_file: Path = LOCK_FILE, package_dir: Path = PACKAGE_DIR) -> str:
    """The bundled layer's asset hash: the package source's fingerprint with the lock's digest and the platform."""
    return cdk.FileSystem.fingerprint(
        str(package_dir),
        exclude=SOURCE_EXCLUDES,
        extra_hash=json.dumps({"lock": lock_digest(lock_file), "python": PYTHON_VERSION, "platforms": PLATFORMS}),
    )
