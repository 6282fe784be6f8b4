"""Rapport's side of the Mem0 comparison: starts bench/mem0_driver.py in Mem0's own environment and talks to it."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from bench.measure import ROOT
from rapport.adapters.local.thread_pools import model_threads

MEM0_PYTHON = ROOT / "bench" / "mem0_env" / "bin" / "python"
DRIVER = ROOT / "bench" / "mem0_driver.py"


def available() -> bool:
    return MEM0_PYTHON.exists()


class Mem0Process:
    """One Mem0 `Memory` in a child process: requests and answers are JSON lines; an answer with `error` raises."""

    def __init__(self, data_dir: Path, model_dir: Path) -> None:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", tempfile.gettempdir()),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "MEM0_TELEMETRY": "False",
            "TOKENIZERS_PARALLELISM": "false",
            "MEM0_DIR": str(data_dir / "mem0-home"),
            # Mem0's process gets the thread pools Rapport's has (adapters/local/thread_pools.py): left at the
            # library defaults, torch's OpenMP pool spins against the other process on a small machine, and one
            # MiniLM pass took ~600 ms instead of ~40 ms on two busy cores: that would measure the machine, not Mem0.
            "OMP_NUM_THREADS": str(model_threads()),
            "MKL_NUM_THREADS": str(model_threads()),
            "OPENBLAS_NUM_THREADS": "1",
        }
        self._process = subprocess.Popen(
            [str(MEM0_PYTHON), str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        self.call("open", path=str(data_dir), model=str(model_dir))

    def call(self, op: str, **arguments: Any) -> dict[str, Any]:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(json.dumps({"op": op, **arguments}) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the Mem0 driver exited during {op!r}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"Mem0 {op}: {answer['error']}")
        return answer

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=60)
