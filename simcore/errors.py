"""Exceptions raised by simcore.

Every error that comes from user input names the field (or rule), the offending value and the
limit, so that the CLI and the HTTP layer can report it without parsing messages::

    SimcoreError
     ├── InputError            a problem, tiling or preset field is malformed or out of range
     │    └── UnsupportedError the chip cannot run this problem (dtype, format, template)
     └── UnknownSocError       no preset of that name
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError


class SimcoreError(Exception):
    """Root of every exception raised by simcore."""


class InputError(SimcoreError, ValueError):
    """A field of a problem, tiling or preset is invalid.

    Attributes:
        field: The offending field, under its public name (for example ``m`` or ``baseK``).
        rule: A stable identifier of the violated rule.
        value: The value that was given.
        limit: The limit the value broke, when there is one.
    """

    def __init__(
        self, field: str, rule: str, message: str, value: Any = None, limit: Any = None
    ) -> None:
        super().__init__(message)
        self.field = field
        self.rule = rule
        self.message = message
        self.value = value
        self.limit = limit

    def to_dict(self) -> dict[str, Any]:
        """Returns the error as a JSON-ready dict (field, rule, message, value, limit)."""
        return {
            "field": self.field,
            "rule": self.rule,
            "message": self.message,
            "value": self.value,
            "limit": self.limit,
        }


class UnsupportedError(InputError):
    """The chip cannot run the problem (for example fp32 cube on Ascend910A)."""


class UnknownSocError(SimcoreError, KeyError):
    """No hardware preset has the requested SoC name."""

    def __init__(self, soc: str, known: list[str]) -> None:
        super().__init__(soc)
        self.soc = soc
        self.known = known

    def __str__(self) -> str:
        return f"unknown SoC {self.soc!r}; known: {', '.join(self.known)}"


def input_error_from(
    exc: ValidationError, prefix: str = "", default_field: str = "input"
) -> InputError:
    """Turns the first error of a pydantic ``ValidationError`` into an :class:`InputError`.

    The field is the error's location (``m``, ``mask``), or the ``field`` a custom validator put
    in the error's context (a model validator has no location of its own), prefixed with
    ``prefix`` when given (``problem.m``). The limit is the context's ``limit`` when a validator
    set one, else pydantic's own bound (``ge 1``, ``le 2147483647``).

    Args:
        exc: The validation error.
        prefix: Dotted prefix of the field (``problem``, ``tiling``); empty for none.
        default_field: The field to name when the error has neither location nor prefix.

    Returns:
        The error, with pydantic's ``extra_forbidden`` and ``missing`` renamed to the rules
        ``unknown_field`` and ``required``.
    """
    err = exc.errors()[0]
    ctx = err.get("ctx") or {}
    loc = ".".join(str(p) for p in err["loc"])
    name = str(ctx.get("field") or loc)
    qualified = f"{prefix}.{name}" if name else prefix
    field = qualified if prefix else name or default_field
    rule = {"extra_forbidden": "unknown_field", "missing": "required"}.get(err["type"], err["type"])
    limit = ctx.get("limit")
    if limit is None:
        for key in ("ge", "gt", "le", "lt", "expected"):
            if key in ctx:
                limit = f"{key} {ctx[key]}"
    value = err.get("input") if err["type"] != "missing" else None
    if isinstance(value, dict):
        # A whole object is not a useful value to echo back (and may be large).
        value = None
    return InputError(field, rule, f"{field}: {err['msg']}", value, limit)
