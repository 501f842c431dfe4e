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
