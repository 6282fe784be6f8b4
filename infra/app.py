"""CDK entry point (`cdk.json` runs it): one Rapport stack, checked by cdk-nag on every synth."""

from __future__ import annotations

import os
import sys
from pathlib import Path

# Run as a script, Python puts infra/ first on sys.path, where infra/constructs would shadow the `constructs`
# library. The project root takes its place so `infra.*` imports resolve and `constructs` is the library.
PROJECT_ROOT = Path(__file__).resolve().parents[1]
if sys.path and Path(sys.path[0]).resolve() == PROJECT_ROOT / "infra":
    sys.path[0] = str(PROJECT_ROOT)

import aws_cdk as cdk  # noqa: E402

from infra.nag import add_nag_packs  # noqa: E402
from infra.stack import RapportStack  # noqa: E402


def main() -> None:
    app = cdk.App()
    stack_name = app.node.try_get_context("stackName") or "Rapport"
    RapportStack(
        app,
        stack_name,
        description="Rapport: relational memory for AI assistants",
        # Environment-agnostic unless the CLI knows an account: synth works offline and without credentials.
        env=cdk.Environment(account=os.environ.get("CDK_DEFAULT_ACCOUNT"), region=os.environ.get("CDK_DEFAULT_REGION")),
    )
    cdk.Tags.of(app).add("project", "rapport")
    # An unacknowledged finding fails the synth; every acknowledgement in infra/ carries its reason.
    add_nag_packs(app)
    app.synth()


if __name__ == "__main__":
    main()
