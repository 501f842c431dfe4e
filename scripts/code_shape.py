"""The shape of the code: no function of 200 lines or more, no module over 800 lines.

The limits of the architecture guide (docs/model.md's layout) for the packages that ship:
``simcore``, ``tiler`` and ``app``. A function's length counts from its ``def`` (decorators
included) to its last line; a module's is its line count. Prints every offender and exits 1 if
there is one; ``.ci/run`` calls it beside ruff and mypy.

    uv run --frozen python -m scripts.code_shape [--max-function-lines 200] [--max-module-lines 800]
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from pathlib import Path

#: The shipped packages the limits apply to (tests, benchmarks and scripts are not held to them).
PACKAGES: tuple[str, ...] = ("simcore", "tiler", "app")
#: No function longer than this many lines, and no module (issue 16's "shape of the code").
MAX_FUNCTION_LINES = 200
MAX_MODULE_LINES = 800


def function_lengths(tree: ast.Module) -> Iterator[tuple[str, int, int]]:
    """Each function and method of a module: (qualified name, first line, length in lines)."""

    def walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, int, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    yield name, first, (child.end_lineno or child.lineno) - first + 1
                yield from walk(child, f"{name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(tree, "")


def offenders(root: Path, max_function: int, max_module: int) -> list[str]:
    """Every module over ``max_module`` lines and function over ``max_function``, as messages."""
    out: list[str] = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            rel = path.relative_to(root)
            lines = len(text.splitlines())
            if lines > max_module:
                out.append(f"{rel}: module of {lines} lines (limit {max_module})")
            for name, first, length in function_lengths(ast.parse(text, filename=str(rel))):
                if length > max_function:
                    out.append(f"{rel}:{first}: {name} is {length} lines (limit {max_function})")
    return out


def main() -> int:
    """Checks the shipped packages under the repository root; 1 if a limit is exceeded."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-function-lines", type=int, default=MAX_FUNCTION_LINES)
    parser.add_argument("--max-module-lines", type=int, default=MAX_MODULE_LINES)
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    found = offenders(root, args.max_function_lines, args.max_module_lines)
    for message in found:
        print(message)
    if not found:
        print(f"code shape: every module <= {args.max_module_lines} lines, every function "
              f"<= {args.max_function_lines} lines in {', '.join(PACKAGES)}")  # fmt: skip
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
