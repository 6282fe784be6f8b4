"""Schemathesis over the whole OpenAPI document of a started local server: generated requests to every operation,
valid and invalid (its examples, coverage, fuzzing and stateful phases), none of which may get a server error, and
every answer must be a status the operation declares, with the declared media type and body schema.

The budget: `MAX_EXAMPLES` per operation and phase with a fixed seed, about 2,500 requests and half a minute on two
cores. Schemathesis runs as its own CLI (`st run`): its pytest plugin does not load under this pytest, and the CLI
is also the command to reproduce a failure with, printed in the output on failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import RunningServer, start_server

MAX_EXAMPLES = 30
SEED = 20261201
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
ST = Path(sys.executable).with_name("st")
HOOKS = Path(__file__).with_name("schemathesis_hooks.py")


@pytest.fixture
def fuzzed_server(tmp_path: Path) -> Iterator[RunningServer]:
    server = start_server(
        tmp_path / "data",
        {"RAPPORT_EMBEDDER": "hashing", "RAPPORT_HASHING_DIMENSIONS": "256", "RAPPORT_API_KEYS": "key-fuzz:tenant-f"},
    )
    yield server
    server.stop()


@pytest.mark.timeout(600)
def test_no_generated_request_gets_a_server_error_or_an_undeclared_answer(
    fuzzed_server: RunningServer, tmp_path: Path
) -> None:
    if not ST.exists():
        pytest.fail(f"schemathesis is not installed in this environment ({ST}): pip install -e '.[dev]'")
    run = subprocess.run(
        [
            str(ST),
            "run",
            f"{fuzzed_server.base_url}/v1/openapi.json",
            "--header",
            "Authorization: Bearer key-fuzz",
            "--checks",
            CHECKS,
            "--max-examples",
            str(MAX_EXAMPLES),
            "--seed",
            str(SEED),
            "--workers",
            "1",
            "--generation-database",
            "none",  # no replay of an earlier run's examples: every run sends the same requests
            "--no-color",
        ],
        cwd=tmp_path,  # its own working files stay out of the tree
        env={**os.environ, "SCHEMATHESIS_HOOKS": str(HOOKS)},  # a serializer for the JSON-lines bodies
        capture_output=True,
        text=True,
        timeout=540,
        check=False,
    )
    report = run.stdout[-12_000:] + run.stderr[-2_000:]
    assert run.returncode == 0, (
        f"schemathesis found failures:\n{report}\n--- server log ---\n{fuzzed_server.output()[-4000:]}"
    )
    assert " passed" in run.stdout and "generated" in run.stdout, report
