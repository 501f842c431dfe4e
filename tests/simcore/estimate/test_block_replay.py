"""The block replay term (block_replay.py): where it is priced."""

from __future__ import annotations

from simcore.estimate.block_replay import block_replay_term
from tests.simcore.estimate.support import bound_by, makespan, records


def test_no_replay_with_fixpipe_and_direct_copies() -> None:
    # With FixPipe the replay prices only tilings with an operand staged through UB.
    r = records("Ascend910B2")
    mk = makespan(0.0)
    block_replay_term(r, mk)
    assert (mk.value[0], bound_by(mk)) == (0.0, "compute")


def test_replay_raises_the_path_where_both_operands_repeat_every_block() -> None:
    # 910A, 1024^3 fp16, both ND (staged), one row and one column of blocks per pass: both
    # operands copied in every block, a short K loop; the replayed blocks take time.
    spec = {
        "usedCoreNum": 32, "singleCoreM": 256, "singleCoreN": 128, "baseM": 64, "baseN": 64,
        "baseK": 64, "depthA1": 2, "depthB1": 2, "stepM": 1, "stepN": 1, "stepKa": 1,
        "stepKb": 1, "iterateOrder": 0, "dbL0A": 2, "dbL0B": 2, "dbL0C": 2,
    }  # fmt: skip
    r = records("Ascend910A", spec)
    assert r.ch.passes_a[0] >= r.g.blocks[0] - 0.5 and r.ch.passes_b[0] >= r.g.blocks[0] - 0.5
    mk = makespan(1.0)  # a short path so far: the copies take more than the replay's share
    block_replay_term(r, mk)
    assert mk.value[0] > 1.0 and bound_by(mk) == "block_replay"
