"""What `cdk.json` runs: finds a Python that has the CDK libraries and runs infra/app.py with it.

`cdk.json` names no virtualenv path, so the same checkout synthesizes from `make synth` (its own `.venv-synth`), from
the development `.venv`, from an activated virtualenv, or from a CI image with the `synth` extra installed globally.
Standard library only: it runs under whatever `python3` is first on the PATH.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
APP = PROJECT_ROOT / "infra" / "app.py"
# Tried in this order after an explicit RAPPORT_VENV and an activated VIRTUAL_ENV.
PROJECT_VENVS = (".venv-synth", ".venv")


def _python_of(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def candidate_pythons(environ: Mapping[str, str], root: Path = PROJECT_ROOT) -> list[Path]:
    """Interpreters to try, most explicit first: RAPPORT_VENV, the active virtualenv, then the project's own."""
    venvs = [Path(environ[name]) for name in ("RAPPORT_VENV", "VIRTUAL_ENV") if environ.get(name)]
    venvs += [root / name for name in PROJECT_VENVS]
    return [_python_of(venv if venv.is_absolute() else root / venv) for venv in venvs]


def choose_python(environ: Mapping[str, str], root: Path = PROJECT_ROOT) -> Path | None:
    """The first existing candidate; None when there is none and this interpreter is to be used as it is."""
    if environ.get("RAPPORT_VENV"):
        # Asked for by name: a missing one is an error to report, not a reason to fall through to another.
        return candidate_pythons(environ, root)[0]
    return next((python for python in candidate_pythons(environ, root) if python.exists()), None)


def main(argv: Sequence[str] = ()) -> None:
    python = choose_python(os.environ)
    if python is None:
        if importlib.util.find_spec("aws_cdk") is None:
            sys.exit(
                "No virtualenv with the CDK libraries: run `make synth`, or `pip install -e '.[synth]'` into the "
                "interpreter that runs cdk (RAPPORT_VENV=<venv> names one)."
            )
        python = Path(sys.executable)
    if not python.exists():
        sys.exit(f"RAPPORT_VENV names {python.parent.parent}, which has no {python.relative_to(python.parent.parent)}")
    # Replaced, not wrapped: cdk sees the app's own output, exit status and signals.
    os.execv(str(python), [str(python), str(APP), *argv])  # noqa: S606


if __name__ == "__main__":
    main(sys.argv[1:])
