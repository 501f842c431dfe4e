"""The code-shape check that CI runs: it flags a long function and a long module, nothing else."""

from __future__ import annotations

import ast
from pathlib import Path

from scripts.code_shape import function_lengths, offenders


def test_function_lengths_count_decorators_and_name_methods() -> None:
    source = "@staticmethod\ndef f():\n    a = 1\n    return a\n\n"
    tree = ast.parse(source + "class C:\n    def g(self):\n        pass\n")
    assert list(function_lengths(tree)) == [("f", 1, 4), ("C.g", 7, 2)]


def test_offenders_flag_a_long_function_and_a_long_module(tmp_path: Path) -> None:
    package = tmp_path / "simcore"
    package.mkdir()
    long_body = "".join(f"    v{i} = {i}\n" for i in range(205))
    (package / "long_function.py").write_text(f"def too_long():\n{long_body}")
    (package / "short.py").write_text("def fine():\n    return 1\n")
    (package / "long_module.py").write_text("".join(f"C{i} = {i}\n" for i in range(801)))
    found = offenders(tmp_path, 200, 800)
    assert len(found) == 2
    assert any("long_function.py:1: too_long is 206 lines" in m for m in found)
    assert any("long_module.py: module of 801 lines" in m for m in found)
    assert offenders(tmp_path, 206, 801) == []
