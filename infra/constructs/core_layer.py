"""The core Lambda layer: the `rapport` package and its runtime dependencies, bundled locally without Docker."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = PROJECT_ROOT / "pyproject.toml"
CORE_SOURCE = PROJECT_ROOT / "layers" / "core"
PACKAGE_DIR = CORE_SOURCE / "rapport"

RUNTIME = lambda_.Runtime.PYTHON_3_12
ARCHITECTURE = lambda_.Architecture.ARM_64
PYTHON_VERSION = "3.12"
# Lambda's python3.12 runs on Amazon Linux 2023 (glibc 2.34): manylinux2014 wheels and the newer 2_28 ones both load.
PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_28_aarch64")
SOURCE_EXCLUDES = ["__pycache__", "*.pyc", "*.egg-info"]

# BundlingOptions requires an image, but local bundling below always succeeds or raises, so it never runs.
DOCKER_IMAGE_NEVER_USED = "public.ecr.aws/sam/build-python3.12:latest-arm64"


def core_dependencies(pyproject: Path = PYPROJECT) -> list[str]:
    """The requirement strings of `[project].dependencies`: what the layer carries (never the local/dev extras)."""
    with pyproject.open("rb") as handle:
        project = tomllib.load(handle)["project"]
    return [str(requirement) for requirement in project["dependencies"]]


@jsii.implements(cdk.ILocalBundling)
class PipLayerBundling:
    """Installs wheels for Lambda's platform with the local pip, then copies the core package beside them."""

    def __init__(self, *, requirements: Sequence[str], package_dir: Path, python: str = sys.executable) -> None:
        self._requirements = list(requirements)
        self._package_dir = package_dir
        self._python = python

    def pip_command(self, target: Path) -> list[str]:
        """The pip invocation that fills `target` with Lambda-compatible (aarch64, CPython 3.12) wheels only."""
        platform_flags = [flag for platform in PLATFORMS for flag in ("--platform", platform)]
        return [
            self._python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-compile",  # Lambda's file system is read-only; .pyc files for another interpreter are dead weight
            *platform_flags,
            "--implementation",
            "cp",
            "--python-version",
            PYTHON_VERSION,
            "--only-binary=:all:",
            "--target",
            str(target),
            *self._requirements,
        ]

    def try_bundle(self, output_dir: str, options: cdk.BundlingOptions) -> bool:
        """Build the layer into `output_dir`; raise rather than return False, so CDK never falls back to Docker.

        jsii calls this with the options struct as one positional argument (the generated stub spells it as
        keyword arguments, which is not what arrives at runtime).
        """
        target = Path(output_dir) / "python"
        result = subprocess.run(self.pip_command(target), capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RuntimeError(f"Bundling the core layer failed (pip exit {result.returncode}):\n{result.stderr}")
        shutil.copytree(
            self._package_dir,
            target / self._package_dir.name,
            ignore=shutil.ignore_patterns(*SOURCE_EXCLUDES),
            dirs_exist_ok=True,
        )
        return True


class CoreLayer(Construct):
    """The one layer every Rapport function carries; with `skip_bundling` the raw source stands in (tests)."""

    def __init__(self, scope: Construct, construct_id: str, *, skip_bundling: bool) -> None:
        super().__init__(scope, construct_id)
        self.layer_version = lambda_.LayerVersion(
            self,
            "Layer",
            code=self._raw_code() if skip_bundling else self._bundled_code(),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="rapport core package and its runtime dependencies",
        )

    @staticmethod
    def _raw_code() -> lambda_.Code:
        return lambda_.Code.from_asset(str(CORE_SOURCE), exclude=SOURCE_EXCLUDES)

    @staticmethod
    def _bundled_code() -> lambda_.Code:
        requirements = core_dependencies()
        # The source hash alone would miss a changed dependency pin, so both go into the asset hash.
        asset_hash = cdk.FileSystem.fingerprint(
            str(PACKAGE_DIR),
            exclude=SOURCE_EXCLUDES,
            extra_hash=json.dumps({"requirements": requirements, "python": PYTHON_VERSION, "platforms": PLATFORMS}),
        )
        return lambda_.Code.from_asset(
            str(CORE_SOURCE),
            asset_hash=asset_hash,
            asset_hash_type=cdk.AssetHashType.CUSTOM,
            bundling=cdk.BundlingOptions(
                image=cdk.DockerImage.from_registry(DOCKER_IMAGE_NEVER_USED),
                local=PipLayerBundling(requirements=requirements, package_dir=PACKAGE_DIR),  # type: ignore[arg-type]
            ),
        )
