"""How each tool's registration is tightened beyond the SDK's defaults.

- Strict arguments. The SDK ignores unknown argument names; a misspelt `expected_version`
  would then be dropped silently. Each tool's argument model forbids extra fields.
- Strings stay strings. The SDK turns a JSON-looking string into a list or object when a
  parameter is not plain `str` (some clients send lists that way). A memory's text may
  well look like JSON, so parameters that accept a string are left as given.
- Bounded strings. No string in the arguments, however nested (a batch item's id, an
  object's key), may exceed `MAX_ARGUMENT_CHARS`, far above every limit of the write gate
  (which still gives the precise refusal), so that a megabyte-long id or filter is
  refused at the door rather than searched for or echoed back in an error.
- Lean schemas. Every agent reads the tool list into its context. The published schemas
  leave out what pydantic adds without saying anything: titles and, for inputs, `null` as
  an alternative for each optional parameter (optional parameters are those not listed as
  required). Validation still runs on the full models.
"""

from __future__ import annotations

import types
import typing
from typing import Any, cast

import pydantic
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata

from . import gate

MAX_ARGUMENT_CHARS = 65_536


def _admits_str(annotation: Any) -> bool:
    if annotation is str:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, typing.Literal):
        return any(a is str or isinstance(a, str) for a in typing.get_args(annotation))
    return False


class _Metadata(FuncMetadata):
    """The SDK's argument handling, minus JSON-parsing a string given where one is allowed."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        parsed = super().pre_parse_json(data)
        fields = self.arg_model.model_fields
        return {
            key: data[key] if key in fields and _admits_str(fields[key].annotation) else value
            for key, value in parsed.items()
        }


class ArgumentTooLong(ValueError):
    """A string somewhere in the arguments is longer than any parameter takes."""


def _bounded(value: Any, path: str) -> None:
    """Refuse any string over the limit, however deeply it is nested (keys included)."""
    if isinstance(value, str):
        if len(value) > MAX_ARGUMENT_CHARS:
            raise ArgumentTooLong(
                f"`{path}` is over {MAX_ARGUMENT_CHARS:,} characters, more than any parameter "
                f"takes (a memory's text holds at most {gate.LIMITS['text']:,})"
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            _bounded(key, path)
            _bounded(item, f"{path}.{gate.shown_name(key)}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _bounded(item, f"{path}[{index}]")


def _bound_strings(cls: type[Any], value: Any, info: pydantic.ValidationInfo) -> Any:
    _bounded(value, info.field_name or "arguments")
    return value


def harden(tool: Tool) -> Tool:
    """Refuse unknown and oversized arguments, keep strings as given (see the module doc)."""
    loose = tool.fn_metadata.arg_model
    strict = cast(
        type[Any],
        type(
            loose.__name__,
            (loose,),
            {
                "__module__": __name__,
                "model_config": pydantic.ConfigDict(**{**loose.model_config, "extra": "forbid"}),
                "_bound_strings": pydantic.field_validator("*", mode="before")(_bound_strings),
            },
        ),
    )
    metadata = tool.fn_metadata
    tool.fn_metadata = _Metadata(
        arg_model=strict,
        output_schema=lean(metadata.output_schema, answers=True),
        output_model=metadata.output_model,
        wrap_output=metadata.wrap_output,
    )
    tool.parameters = lean(strict.model_json_schema(by_alias=True))
    return tool


def lean(schema: Any, *, answers: bool = False) -> Any:
    """`schema` without titles, `null` alternatives and null defaults.

    For `answers` (an output schema) only titles go: a null in an answer is real.
    """
    if isinstance(schema, list):
        return [lean(item, answers=answers) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "anyOf" in schema and not answers:
        options = [o for o in schema["anyOf"] if o != {"type": "null"}]
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        schema = {**options[0], **rest} if len(options) == 1 else {**rest, "anyOf": options}
    slim: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" or (key == "default" and value is None and not answers):
            continue
        if key in ("properties", "$defs"):  # names, not keywords, at this level
            slim[key] = {name: lean(sub, answers=answers) for name, sub in value.items()}
        else:
            slim[key] = lean(value, answers=answers)
    return slim
