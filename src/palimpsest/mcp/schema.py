"""How each tool's registration is tightened beyond the SDK's defaults.

- Strict arguments. The SDK ignores unknown argument names; a misspelt `expected_version`
  would then be dropped silently. Each tool's argument model forbids extra fields, and
  takes each value in its own JSON type: `"yes"` is no boolean, `"5"` and `5.0` no count.
- Strings stay strings. The SDK turns a JSON-looking string into a list or object when a
  parameter is not plain `str` (some clients send lists that way). A memory's text may
  well look like JSON, so parameters that accept a string are left as given.
- Read as the service reads it. A value from a fixed list (a kind, a status, a link type)
  is read regardless of case, with `-` for `_` ("Relates-To" is relates_to), by the
  service's own rule (`text.canonical`), so every adapter agrees; a single string where
  a list is expected is a list of one (`tags: "infra"`).
- Bounded strings. No string in the arguments, however nested (a batch item's id, an
  object's key), may exceed `MAX_ARGUMENT_CHARS`, far above every limit of the write gate
  (which still gives the precise refusal), so that a megabyte-long id or filter is
  refused at the door rather than searched for or echoed back in an error.
- Lean schemas. Every agent reads the tool list into its context. The published schemas
  leave out what pydantic adds without saying anything: titles, JSON Schema's defaults,
  empty defaults, `"type": "string"` beside a list of string values, `$defs` used once
  (written in place instead of referred to) and, for inputs, `null` as an alternative for
  each optional parameter (optional parameters are those not listed as required).
  Validation still runs on the full models.
- Output schemas derived from the service's answer types (service/answers.py), never
  restated here: each key an answer may hold with its JSON type (not what a list or an
  object in it holds: `answer_schema` says why), all optional and open, since an agent
  reads answers lean (answers.py) and a committed write's answer must reach it whole.
"""

from __future__ import annotations

import re
import types
import typing
from typing import Any, cast

import pydantic
import typing_extensions
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.types import ToolAnnotations

from ..domain.text import canonical
from ..service import LIMITS, shown_name
from ..service.answers import INTERNAL_KEYS

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
                f"takes (a memory's text holds at most {LIMITS['text']:,})"
            )
    elif isinstance(value, dict):
        for key, item in value.items():
            _bounded(key, path)
            _bounded(item, f"{path}.{shown_name(key)}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _bounded(item, f"{path}[{index}]")


def _bound_strings(cls: type[Any], value: Any, info: pydantic.ValidationInfo) -> Any:
    _bounded(value, info.field_name or "arguments")
    return value


def _forgiven(annotation: Any, value: Any, wrap: bool = True) -> Any:
    """`value` as the service would read it, so that the schema does not refuse it first.

    A string naming one allowed value regardless of case (and with `-` for `_`) becomes it,
    as in the service's parse; a single string where only a list is allowed becomes a list
    of one (`tags: "infra"`). Follows the annotation into unions, lists and nested objects;
    leaves everything else, including a string that matches nothing, for validation to
    refuse.
    """
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _forgiven(typing.get_args(annotation)[0], value, wrap)
    if origin is typing.Literal and isinstance(value, str):
        allowed = tuple(option for option in typing.get_args(annotation) if isinstance(option, str))
        return canonical(value, allowed) or value
    if origin in (typing.Union, types.UnionType):
        wrap = wrap and not _takes_string(annotation)
        for option in typing.get_args(annotation):
            value = _forgiven(option, value, wrap)
        return value
    if origin is list and isinstance(value, str) and wrap:
        value = [value]
    if origin is list and isinstance(value, list):
        (item,) = typing.get_args(annotation)
        return [_forgiven(item, element) for element in value]
    if typing_extensions.is_typeddict(annotation) and isinstance(value, dict):
        hints = typing.get_type_hints(annotation)
        return {k: _forgiven(hints[k], v) if k in hints else v for k, v in value.items()}
    return value


def _takes_string(annotation: Any) -> bool:
    """Whether a string is a valid value of `annotation` (then it is never made a list)."""
    origin = typing.get_origin(annotation)
    if annotation is str or origin is typing.Literal:
        return True
    if origin in (typing.Annotated, typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        return any(_takes_string(a) for a in (args[:1] if origin is typing.Annotated else args))
    return False


def _forgive_case(cls: type[Any], value: Any, info: pydantic.ValidationInfo) -> Any:
    """ "Fact" for fact, "infra" for ["infra"] (see `_forgiven`). A batch item's fields are
    read as the tool's own parameters."""
    fields = cls.model_fields
    if info.field_name == "items" and isinstance(value, list):
        return [
            {k: _forgiven(fields[k].annotation, v) if k in fields else v for k, v in item.items()}
            if isinstance(item, dict)
            else item
            for item in value
        ]
    return _forgiven(fields[info.field_name].annotation, value) if info.field_name else value


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
                # strict: JSON types as sent, never pydantic's lax coercion ("yes" for true)
                "model_config": pydantic.ConfigDict(
                    **{**loose.model_config, "extra": "forbid", "strict": True}
                ),
                "_bound_strings": pydantic.field_validator("*", mode="before")(_bound_strings),
                "_forgive_case": pydantic.field_validator("*", mode="before")(_forgive_case),
            },
        ),
    )
    answer = typing.get_type_hints(tool.fn).get("return")
    tool.fn_metadata = _Metadata(
        arg_model=strict,
        output_schema=answer_schema(answer) if answer is not None else None,
        # Not validated here against the service's types: the answer an agent reads is lean
        # (keys with empty values left out), and a write that committed must reach it whole.
        # mypy holds the service to its types; the client checks the published schema.
        output_model=None,
        wrap_output=False,
    )
    tool.parameters = lean(_in_place(strict.model_json_schema(by_alias=True)))
    if tool.annotations is not None:
        tool.annotations = _unrepeated(tool.annotations, titled=bool(tool.title))
    return tool


def _unrepeated(hints: ToolAnnotations, *, titled: bool) -> ToolAnnotations:
    """`hints` without what is said elsewhere or means nothing: the title when the tool has
    its own, and for a tool that only reads, whether its writes destroy or repeat."""
    update: dict[str, Any] = {"title": None} if titled else {}
    if hints.read_only_hint:
        update.update(destructive_hint=None, idempotent_hint=None)
    return hints.model_copy(update=update)


def _in_place(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each definition written where it is used, when none refers to another
    (a nested object is then read where it stands, and its name costs nothing)."""
    definitions = schema.get("$defs", {})
    if "$ref" in str(definitions):
        return schema

    def resolved(node: Any) -> Any:
        if isinstance(node, list):
            return [resolved(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**definitions[node["$ref"].removeprefix("#/$defs/")], **resolved(rest)}
        return {k: resolved(v) for k, v in node.items() if k != "$defs"}

    return cast(dict[str, Any], resolved(schema))


def lean(schema: Any) -> Any:
    """An input `schema` without titles, `null` alternatives, empty defaults and the defaults
    JSON Schema already implies (`additionalProperties: true`, a string type beside a list
    of strings)."""
    if isinstance(schema, list):
        return [lean(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if o != {"type": "null"}]
        rest = {k: v for k, v in schema.items() if k != "anyOf"}
        schema = {**options[0], **rest} if len(options) == 1 else {**rest, "anyOf": options}
    slim: dict[str, Any] = {}
    enums = schema.get("enum", [None])
    for key, value in schema.items():
        if key == "title" or (key == "default" and value in (None, False, "")):
            continue
        if key == "additionalProperties" and value is True:
            continue
        if key == "type" and value == "string" and all(isinstance(v, str) for v in enums):
            continue
        if key in ("properties", "$defs"):  # names, not keywords, at this level
            slim[key] = {name: lean(sub) for name, sub in value.items()}
        else:
            slim[key] = lean(value)
    return slim


# Every write answers these the same way; the server instructions explain them once.
_SHARED_ANSWERS = ("dry_run", "replayed")


def answer_schema(answer: Any) -> dict[str, Any]:
    """The output schema of a tool answering `answer` (a type of service/answers.py): each
    key its answers may hold, with its JSON type.

    What a list or an object holds (a hit's keys, a result's) is not spelt out: with their
    keys and types the tool list would pass 30,000 characters (DESIGN section 7: its limit)
    by some 18,000; what they hold is in each tool's description. `lean_answer` gives the
    whole typed shape, which the tests hold every real answer to, closed."""
    full = pydantic.TypeAdapter(answer).json_schema()
    keys = lean_answer(full, full.get("$defs", {})).get("properties", {})
    return {
        "type": "object",
        "properties": {k: _shallow(v) for k, v in keys.items() if k not in _SHARED_ANSWERS},
    }


def _shallow(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema`'s JSON type alone (see `answer_schema`)."""
    return {"type": schema["type"]} if "type" in schema else {}


def lean_answer(schema: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """`schema`, an answer's, reduced to what tells the agent something: each key with its
    JSON type, nested objects with their keys, an array with its items' shape.

    Left out: titles and descriptions (what a key means is in the tool's description, which
    every client shows the model), `required` (an agent reads answers lean: an empty value
    is left out, whatever the key, and a replay under an idempotency key answers ids only)
    and `null` (lean leaves it out too). A union of objects is one object with the keys of
    each. Nothing is closed: an answer is never refused for a key the schema lacks."""
    if "$ref" in schema:
        return lean_answer(definitions[schema["$ref"].removeprefix("#/$defs/")], definitions)
    options = [o for o in schema.get("anyOf", []) if o != {"type": "null"}]
    if options:
        leaned = [lean_answer(option, definitions) for option in options]
        if len(leaned) == 1:
            return leaned[0]
        if all(o.get("type") == "object" for o in leaned):
            merged: dict[str, Any] = {}
            for option in leaned:
                merged |= option.get("properties", {})
            return {"type": "object", "properties": merged}
        return {"anyOf": leaned}
    kind = schema.get("type")
    if kind == "object":
        properties = {
            name: lean_answer(sub, definitions)
            for name, sub in schema.get("properties", {}).items()
            if name not in INTERNAL_KEYS
        }
        return {"type": "object", "properties": properties} if properties else {"type": "object"}
    if kind == "array":
        items = lean_answer(schema.get("items", {}), definitions)
        return {"type": "array", "items": items} if items else {"type": "array"}
    return {"type": kind} if kind else {}


def relevant_errors(errors: list[Any]) -> list[Any]:
    """pydantic's errors about the arguments, as a caller can act on them.

    Each `loc` loses the labels pydantic gives a union's alternatives ("literal[...]"). Of
    the errors a union gives for one parameter, only those of the shape the caller sent
    are kept: a list's elements when a list was sent, else the single value's.
    """
    by_field: dict[Any, list[Any]] = {}
    for error in errors:
        by_field.setdefault(error["loc"][0] if error["loc"] else "", []).append(error)
    kept = []
    for group in by_field.values():
        if any(len(_path(e["loc"])) != len(e["loc"]) for e in group):
            inside = [e for e in group if e["loc"] and isinstance(e["loc"][-1], int)]
            choices = [e for e in group if e["type"] == "literal_error"]
            group = inside or choices or group
        kept += [{**error, "loc": _path(error["loc"])} for error in group]
    return kept


def _path(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(p for p in loc if isinstance(p, int) or not any(c in p for c in "[]'(,"))


def allowed_values(error: Any) -> str | None:
    """For a value outside a fixed list: "must be one of a, b, c", as the service says it."""
    if error["type"] != "literal_error":
        return None
    allowed = re.findall(r"'([^']*)'", error.get("ctx", {}).get("expected", ""))
    return "must be one of " + ", ".join(allowed)
