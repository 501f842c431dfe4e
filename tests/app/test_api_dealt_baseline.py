"""The tune answer's scope: the certificate says what it proved, MatMulV3's dealt kernel is listed.

aclnn MatMulV3 runs 128 x 256 base blocks dealt to every core in rounds (a dealt split). The
certified search holds such splits on the 910B family (tiles of 1 or 2 base blocks a side), so
its answer is at least as fast there; the answer lists that kernel as the ``aclnn_matmul_v3``
baseline where aclnn runs it, and says plainly when it beats a tuned tiling whose space does not
hold it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from simcore.evaluate import estimate_dict
from simcore.hardware.presets import load_preset
from simcore.tiling.footprints import complete_tiling
from simcore.tiling.legality import check_tiling
from simcore.tiling.problem import parse_problem
from tests.app._server import Server, running_server
from tiler.screen import CERTIFICATE_SCOPE, DEALT_SCOPE

#: 910B2 fp16 8192^3 with the MDL template (aclnn's, as the torch.mm board cases): the dealt
#: kernel simulates at 3,444.0 us, below the best one-tile-per-core tiling (about 3,462 us).
BIG_MDL = {"soc": "Ascend910B2", "m": 8192, "n": 8192, "k": 8192, "dtype": "fp16",
           "template": "mdl"}  # fmt: skip
#: The same chip's 2048^3 with the default template: the dealt kernel is listed but slower.
MID = {"soc": "Ascend910B2", "m": 2048, "n": 2048, "k": 2048, "dtype": "fp16"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    env = {"TILER_SEARCH_EXECUTOR": "thread", "TILER_DEFAULT_BUDGET": "0"}
    with running_server(tmp_path_factory.mktemp("dealt"), env) as srv:
        yield srv


def _tune(server: Server, problem: dict[str, Any]) -> dict[str, Any]:
    with server.client() as client:
        reply = client.post("/v1/tilings:tune", json={"problem": problem, "budget": 0})
    assert reply.status_code == 200, reply.text
    answer: dict[str, Any] = reply.json()
    return answer


def _baseline(answer: dict[str, Any], name: str) -> dict[str, Any] | None:
    return next((b for b in answer["baselines"] if b["name"] == name), None)


def test_the_search_covers_matmul_v3s_form_and_its_answer_is_at_least_as_fast(
    server: Server,
) -> None:
    answer = _tune(server, BIG_MDL)
    assert answer["certificate"]["scope"] == DEALT_SCOPE
    assert answer["certificate"]["exact"] is True
    v3 = _baseline(answer, "aclnn_matmul_v3")
    assert v3 is not None
    # MatMulV3's kernel: 128 x 256 x 64 base blocks as the tiles, dealt to all 24 cores.
    tiling = v3["tiling"]
    assert (tiling["usedCoreNum"], tiling["singleCoreM"], tiling["singleCoreN"]) == (24, 128, 256)
    assert (tiling["baseM"], tiling["baseN"], tiling["baseK"]) == (128, 256, 64)
    assert (tiling["depthA1"], tiling["depthB1"], tiling["stepKa"], tiling["stepKb"]) == (
        16, 8, 8, 4,
    )  # fmt: skip
    assert v3["valid"] is True
    # Priced by the model as every baseline is: the simulator's time of that tiling.
    problem = parse_problem(BIG_MDL)
    preset = load_preset(problem.soc)
    own = estimate_dict(problem, complete_tiling(tiling, problem, preset), preset)
    assert v3["estimate"]["time_us"] == pytest.approx(own["time_us"], rel=1e-12)
    assert v3["estimate"]["time_us"] == pytest.approx(3444.0, abs=0.1)
    # The answer (before dealt splits were searched: 3,462.2 us, one tile per core) is now at
    # least as fast: speedup at least 1, no caveat.
    assert v3["speedup"] >= 1.0
    assert answer["estimate"]["time_us"] <= v3["estimate"]["time_us"]
    assert "dealt_split_faster" not in {c["id"] for c in answer["explanation"]["caveats"]}
    # The search found it on its own (the baseline is never a candidate): a dealt split of
    # its own, not MatMulV3's tiling.
    answer_tiling = complete_tiling(answer["tiling"], problem, preset)
    report = check_tiling(problem, answer_tiling, preset)
    assert report.valid
    assert "DEALT_SPLIT" in report.warning_ids
    assert answer["tiling"] != tiling


def test_a_faster_dealt_kernel_outside_the_pinned_space_is_named_in_the_caveats(
    server: Server,
) -> None:
    # usedCoreNum pinned below the cores: the space holds no dealt split (they run on every
    # core), the certificate says so, and MatMulV3's faster kernel is named in a caveat.
    with server.client() as client:
        reply = client.post(
            "/v1/tilings:tune",
            json={"problem": BIG_MDL, "budget": 0, "fixed": {"usedCoreNum": 20}},
        )
    assert reply.status_code == 200, reply.text
    answer = reply.json()
    assert answer["certificate"]["scope"] == CERTIFICATE_SCOPE
    v3 = _baseline(answer, "aclnn_matmul_v3")
    assert v3 is not None and v3["speedup"] < 1.0
    caveat = next(c for c in answer["explanation"]["caveats"] if c["id"] == "dealt_split_faster")
    gain = (answer["estimate"]["time_us"] / v3["estimate"]["time_us"] - 1.0) * 100.0
    assert f"by {gain:.2f} %" in caveat["message"]
    assert "aclnn_matmul_v3" in caveat["message"]
    assert "does not hold its core split and base block" in caveat["message"]


def test_a_slower_dealt_kernel_is_listed_without_a_caveat(server: Server) -> None:
    answer = _tune(server, MID)
    v3 = _baseline(answer, "aclnn_matmul_v3")
    assert v3 is not None
    assert v3["speedup"] > 1.0
    assert "dealt_split_faster" not in {c["id"] for c in answer["explanation"]["caveats"]}
    assert answer["certificate"]["scope"] == DEALT_SCOPE


@pytest.mark.parametrize(
    ("problem", "scope"),
    [
        # Chips that stage operands through UB: no dealt split searched.
        ({**MID, "soc": "Ascend910A"}, CERTIFICATE_SCOPE),  # not the 910B family
        ({**MID, "soc": "Ascend310P3"}, CERTIFICATE_SCOPE),
        ({**MID, "dtype": "fp32"}, DEALT_SCOPE),  # MatMulV3 takes other base blocks for fp32
        ({**MID, "trans_b": True}, DEALT_SCOPE),  # a transpose changes its block
        ({**MID, "m": 256, "n": 512, "k": 256}, DEALT_SCOPE),  # 2 x 2 tiles: fewer than cores
    ],
    ids=["910A", "310P3", "fp32", "trans_b", "tiny"],
)
def test_outside_matmul_v3s_scope_there_is_no_such_baseline(
    server: Server, problem: dict[str, Any], scope: str
) -> None:
    answer = _tune(server, problem)
    assert _baseline(answer, "aclnn_matmul_v3") is None
    assert _baseline(answer, "seed002") is not None
    assert answer["certificate"]["scope"] == scope


def test_the_explore_page_states_the_scope_and_lists_the_dealt_kernel(server: Server) -> None:
    with server.client() as client:
        page = client.get("/explore", params={k: str(v) for k, v in BIG_MDL.items()})
    assert page.status_code == 200, page.text
    assert "id='certificate-scope'" in page.text
    assert f"The search covers the tilings with {DEALT_SCOPE}" in page.text
    # The answer beats MatMulV3's kernel: no caveat, the baseline still listed.
    assert "id='dealt-split-faster'" not in page.text
    assert "data-baseline='aclnn_matmul_v3'" in page.text
