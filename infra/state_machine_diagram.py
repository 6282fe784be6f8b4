"""Draws the synthesized pipeline state machine as a mermaid flowchart (`python -m infra.state_machine_diagram`),
so docs/pipeline.md shows the definition the stack deploys, not a drawing of what it once was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def definition_from_template(template: dict[str, Any]) -> dict[str, Any]:
    """The state machine's ASL, with resource ARNs (tokens in the template) left as placeholders."""
    (machine,) = [r for r in template["Resources"].values() if r["Type"] == "AWS::StepFunctions::StateMachine"]
    expression = machine["Properties"]["DefinitionString"]
    if isinstance(expression, str):
        return dict(json.loads(expression))
    separator, parts = expression["Fn::Join"]
    return dict(json.loads(separator.join(p if isinstance(p, str) else "<resource>" for p in parts)))


def mermaid(definition: dict[str, Any]) -> str:
    lines = ["flowchart TD", f"    start([start]) --> {definition['StartAt']}"]
    _states(definition["States"], lines, "    ")
    return "\n".join(lines)


def _states(states: dict[str, Any], lines: list[str], indent: str) -> None:
    for name, state in states.items():
        kind = state["Type"]
        if kind == "Parallel":
            lines.append(f"{indent}subgraph {name} [{name}: in parallel]")
            for branch in state["Branches"]:
                _states(branch["States"], lines, indent + "    ")
            lines.append(f"{indent}end")
        elif kind in ("Succeed", "Fail"):
            lines.append(f"{indent}{name}([{name}{': ' + state['Error'] if 'Error' in state else ''}])")
        else:
            lines.append(f'{indent}{name}["{_label(name, state)}"]')
        if "Next" in state:
            lines.append(f"{indent}{name} --> {state['Next']}")
        for catch in state.get("Catch", []):
            lines.append(f"{indent}{name} -.->|{', '.join(catch['ErrorEquals'])}| {catch['Next']}")


def _label(name: str, state: dict[str, Any]) -> str:
    parts = [name]
    for retry in state.get("Retry", []):
        errors = retry["ErrorEquals"]
        named = "Lambda service errors" if all(e.startswith("Lambda.") for e in errors) else ", ".join(errors)
        wait = f"{retry.get('IntervalSeconds', 1)} s ×{retry.get('BackoffRate', 2)}"
        if "MaxDelaySeconds" in retry:
            wait += f" ≤{retry['MaxDelaySeconds']} s"
        if retry.get("JitterStrategy") == "FULL":
            wait += ", full jitter"
        parts.append(f"retry {named}: {retry.get('MaxAttempts', 3)}× ({wait})")
    if "TimeoutSeconds" in state:
        parts.append(f"timeout {state['TimeoutSeconds']} s")
    return "<br/>".join(parts)


def main() -> None:
    import aws_cdk as cdk
    from aws_cdk.assertions import Template

    from infra.stack import RapportStack

    context = json.loads((PROJECT_ROOT / "cdk.json").read_text())["context"]
    app = cdk.App(context={**context, "skipBundling": True})
    template = Template.from_stack(RapportStack(app, "Rapport")).to_json()
    print(mermaid(definition_from_template(template)))


if __name__ == "__main__":
    main()
