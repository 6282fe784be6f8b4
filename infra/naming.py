"""Physical names for the resources that need one: the stack's name plus a suffix of its CloudFormation id.

A name from the stack's name alone collides twice: between two stacks of the same name in two regions' shared
namespaces, and with the retained resources of a destroyed stack when it is deployed again. The stack id's first
UUID group is new for every stack created, so a redeploy after `cdk destroy` gets names of its own.
"""

from __future__ import annotations

import re

import aws_cdk as cdk

SUFFIX_LENGTH = 8  # the first group of the stack id's UUID: 8 hex digits


def name_base(stack_name: str, length: int) -> str:
    """Lowercase letters, digits and hyphens from the stack's name, starting with a letter, at most `length` long."""
    base = re.sub(r"[^a-z0-9-]+", "-", stack_name.lower()).strip("-") or "rapport"
    if not base[0].isalpha():
        base = f"r{base}"
    return base[:length].rstrip("-")


def stack_suffix(stack: cdk.Stack) -> str:
    """A token: the first group of the UUID at the end of `AWS::StackId` (`arn:…:stack/<name>/<uuid>`)."""
    uuid = cdk.Fn.select(2, cdk.Fn.split("/", stack.stack_id))
    return cdk.Fn.select(0, cdk.Fn.split("-", uuid))


def physical_name(stack: cdk.Stack, *, max_length: int, reserve: int = 0) -> str:
    """`<base>-<suffix>` in at most `max_length` characters, leaving `reserve` for what a caller appends."""
    base = name_base(stack.stack_name, max_length - reserve - SUFFIX_LENGTH - 1)
    return f"{base}-{stack_suffix(stack)}"
