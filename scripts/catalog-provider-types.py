"""`patchspec catalog`'s model formats checked against the providers' own
typed params, with pydantic's TypeAdapter: the `openai` Python SDK's
`ChatCompletionFunctionToolParam` (`--format openai`) and Responses API
`FunctionToolParam` (`--format openai-responses`), the `anthropic` SDK's
`ToolParam` (`--format anthropic`), each without and with `--strict`.
A tool must validate, and carry no key its type does not declare (a
TypedDict would otherwise let a misspelt key through). Run by
scripts/catalog-provider-types.sh in a venv with both SDKs; usage:

    python catalog-provider-types.py PATCHSPEC_BINARY

Prints one line per check and `catalog-types: N passed, N failed`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import typing

from anthropic.types import ToolParam
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from pydantic import TypeAdapter, ValidationError

binary = sys.argv[1]
passed = failed = 0


def check(label: str, ok: bool, detail: str = "") -> None:
    global passed, failed
    if ok:
        passed += 1
        print(f"ok   {label}")
    else:
        failed += 1
        print(f"FAIL {label}{': ' + detail if detail else ''}")


def keys_of(typed: type) -> set[str]:
    return set(typing.get_type_hints(typed, include_extras=True))


FORMATS = [
    ("openai", ChatCompletionFunctionToolParam, "function"),
    ("openai-responses", FunctionToolParam, None),
    ("anthropic", ToolParam, None),
]

for fmt, typed, inner in FORMATS:
    adapter = TypeAdapter(typed)
    for strict in (False, True):
        args = [binary, "catalog", "--format", fmt] + (["--strict"] if strict else [])
        tools = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
        label = fmt + (" --strict" if strict else "")
        for tool in tools:
            name = tool.get(inner, tool).get("name") if inner else tool.get("name")
            try:
                adapter.validate_python(tool)
                valid, why = True, ""
            except ValidationError as e:
                valid, why = False, str(e)[:300]
            extra = set(tool) - keys_of(typed)
            if inner:
                from openai.types.shared_params import FunctionDefinition

                extra |= set(tool[inner]) - keys_of(FunctionDefinition)
            strict_flag = (tool[inner] if inner else tool).get("strict")
            check(
                f"{label} {name}: a valid {typed.__name__}, no undeclared key, strict {strict_flag}",
                valid and not extra and bool(strict_flag) == strict,
                why or f"undeclared keys {sorted(extra)}",
            )

print(f"catalog-types: {passed} passed, {failed} failed")
sys.exit(0 if failed == 0 else 1)
