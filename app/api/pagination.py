"""Opaque page cursors shared by the list routes (``GET /v1/tilings``, ``GET /v1/tuning-jobs``).

A cursor is the URL-safe base64 of an integer position (a row's insertion sequence or an item
index) without padding: opaque to clients, so the position scheme can change without breaking
them, and safe in a query string.
"""

from __future__ import annotations

import base64
import binascii

from app.problem_json import ProblemError


def encode_cursor(value: int) -> str:
    """The cursor of a position."""
    return base64.urlsafe_b64encode(str(value).encode()).decode().rstrip("=")


def decode_cursor(cursor: str, minimum: int = 1) -> int:
    """The position a cursor stands for.

    Args:
        cursor: A ``next_cursor`` this service returned.
        minimum: The smallest position a valid cursor of this route holds.

    Raises:
        ProblemError: 422 naming ``cursor`` when it is not one this service returned.
    """
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = int(base64.urlsafe_b64decode(padded.encode()).decode())
    except (ValueError, binascii.Error, UnicodeDecodeError):
        value = minimum - 1
    if value < minimum:
        raise ProblemError(
            422,
            "validation-error",
            "cursor is not a cursor this service returned",
            errors=[
                {
                    "field": "cursor",
                    "rule": "cursor_format",
                    "message": "cursor: pass the next_cursor of the previous page unchanged",
                    "value": cursor,
                    "limit": None,
                }
            ],
        )
    return value
