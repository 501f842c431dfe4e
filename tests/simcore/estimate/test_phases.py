"""Phases (phases.py): per block type the longer of two chains, a sum of maxima, by hand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from simcore.estimate.compute import ComputePath
from simcore.estimate.paths import QueuePaths
from simcore.estimate.phases import phase_terms
from simcore.estimate.slot_a_pass import AChain
from simcore.estimate.slot_b import BChain
from simcore.estimate.stalls import Stalls
from tests.simcore.estimate.support import arr, bound_by, makespan, records


def test_b_every_block_binds_the_tail_row_while_the_compute_binds_the_rest() -> None:
    r = records()  # 910B2 (FixPipe: no per-line drain phases)
    # 2 x 2 blocks, K of 4 steps; B in 2 chunks per pass, copied in every block (4 passes), A
    # once. The blocks' MMAD chains: 1000 in all, 100 in the tail row.
    g = replace(r.g, m_iter=arr(2), n_iter=arr(2), blocks=arr(4), blocks_n=arr(4), k_iter=arr(4))
    ch = replace(r.ch, kc_b=arr(2), passes_a=arr(1), passes_b=arr(4))
    bt = replace(r.bt, span=arr(1000), span_tail=arr(100), span_ctail=arr(100), dr_last=arr(7))
    cp = replace(r.cp, mte2=arr(0))
    avg = replace(r.avg, mm=arr(5))
    zero = arr(0)
    st = Stalls(bound_ex=zero, burst_a=zero, inner=zero, inner_rel=zero, normal=zero)
    cm = ComputePath(compute_path=arr(900), start=zero, start_0=zero)
    qp = QueuePaths(c1_path=zero, copy_path=zero, drain_path=zero, idx_c1=np.zeros(0, int),
                    stall_c1=zero, tail_plain=zero)  # fmt: skip
    bc = BChain(chain_b=arr(800), pass_b_cyc=arr(1000), per_pass_b=arr(250))
    ac = AChain(chain_a=zero, own_a=0.0, per_pass_a=zero)
    mk = makespan(0.0)
    phase_terms(replace(r, g=g, ch=ch, bt=bt, cp=cp, avg=avg), st, cm, qp, ac, bc, mk)
    # B's chain per block without its reads after each chunk's first step (half of the steps:
    # (4 - 2) / 4): c = (1000 - 0.5 x 1000) / 4 = 125. Full row: 2 x 125 - 0.5 x 900 = -200
    # (the compute binds), tail row: 2 x 125 - 0.5 x 100 = 200 (B binds): the sum of the maxima
    # exceeds the maximum of the sums by min(200, 200).
    assert mk.value[0] == max(900, 800 + 5 + 7) + 200
    assert bound_by(mk) == "phase_b_every_block"
