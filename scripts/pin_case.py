"""Pinned estimator cases (tests/simcore/estimate/cases/*.json): add one, or review them all.

A pinned case is a tiling the estimator once priced far from the simulator, kept with the
mechanism that fixed it, its tolerance and the term that binds on it. The test
(``test_pinned_cases_agree_with_the_simulator_and_name_their_term``) checks both.

    uv run python -m scripts.pin_case add chains --name my_case --mechanism "..." \\
        --problem '{"soc": "Ascend910A", "m": 512, "n": 1024, "k": 3000}' \\
        --tiling '{"usedCoreNum": 30, ...}' --tolerance 0.01
    uv run python -m scripts.pin_case review chains       # each case: error, binding term now
    uv run python -m scripts.pin_case review chains --rebind   # after a deliberate model change

``add`` refuses a case the estimate misses by more than its tolerance. ``--rebind`` rewrites the
binding terms with today's: use it only with a MODEL_VERSION bump, and read the diff (a case
whose term changed pins a mechanism another term now covers).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from simcore.alloc import tune_allocator
from simcore.estimate.estimator import estimate_one
from simcore.hardware.presets import load_preset
from simcore.pipeline.simulator import simulate
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import parse_problem

CASES_DIR = Path(__file__).resolve().parent.parent / "tests" / "simcore" / "estimate" / "cases"


def score(case: dict[str, Any]) -> tuple[float, str]:
    """(estimate / simulation - 1, binding term) of a case."""
    problem = parse_problem(case["problem"])
    preset = load_preset(problem.soc)
    tiling = complete_tiling(case["tiling"], problem, preset)
    if not check_tiling(problem, tiling, preset).valid:
        raise SystemExit(f"{case['name']}: the tiling is not legal")
    est = estimate_one(problem, tiling, preset)
    return est["time_us"] / simulate(problem, tiling, preset).time_us - 1, est["binding_term"]


def write(path: Path, doc: dict[str, Any]) -> None:
    """The cases file, one line per problem and tiling."""
    out = ["{", f'  "about": {json.dumps(doc["about"])},', '  "cases": [']
    for i, c in enumerate(doc["cases"]):
        keys = ("name", "mechanism", "open", "binding_term", "tolerance", "problem", "tiling")
        fields = [f'      "{k}": {json.dumps(c[k])}' for k in keys if k in c]
        out += ["    {", ",\n".join(fields), "    }" + ("," if i < len(doc["cases"]) - 1 else "")]
    out += ["  ]", "}"]
    path.write_text("\n".join(out) + "\n")


def main() -> int:
    tune_allocator()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("add", "review"))
    parser.add_argument("file", help="cases file stem, e.g. chains")
    parser.add_argument("--name")
    parser.add_argument("--mechanism")
    parser.add_argument("--problem")
    parser.add_argument("--tiling")
    parser.add_argument("--tolerance", type=float, default=0.01)
    parser.add_argument("--rebind", action="store_true")
    args = parser.parse_args()
    path = CASES_DIR / f"{args.file}.json"
    doc = json.loads(path.read_text())
    if args.action == "add":
        case = {"name": args.name, "mechanism": args.mechanism, "tolerance": args.tolerance,
                "problem": json.loads(args.problem), "tiling": json.loads(args.tiling)}  # fmt: skip
        if any(c["name"] == args.name for c in doc["cases"]):
            raise SystemExit(f"{args.name}: already pinned")
        err, term = score(case)
        print(f"{args.name}: {err * 100:+.2f} %, bound by {term}")
        if abs(err) > args.tolerance:
            print("outside its tolerance: not pinned", file=sys.stderr)
            return 1
        doc["cases"].append({**case, "binding_term": term})
    else:
        for case in doc["cases"]:
            err, term = score(case)
            moved = "" if term == case["binding_term"] else f" (was {case['binding_term']})"
            flag = " OUT OF TOLERANCE" if abs(err) > case["tolerance"] else ""
            print(f"{case['name']}: {err * 100:+.2f} %{flag}, bound by {term}{moved}")
            if args.rebind:
                case["binding_term"] = term
        if not args.rebind:
            return 0
    write(path, doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
