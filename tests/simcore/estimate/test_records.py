"""The shared records (records.py): built once, consistent with each other."""

from __future__ import annotations

import numpy as np

from tests.simcore.estimate.support import records


def test_records_agree_on_the_chunking() -> None:
    r = records()
    assert r.g.kf[0] == r.g.k_iter[0] - 1
    assert r.ch.km_a[0] == r.ch.kc_a[0] - 1 and r.ch.km_b[0] == r.ch.kc_b[0] - 1
    assert r.ch.a_last_start[0] == r.ch.km_a[0] * r.ch.step_ka[0]
    assert r.ch.r_last_a[0] == r.g.k_iter[0] - r.ch.a_last_start[0]
    # A's first copy of a pass is a full chunk's where the pass has several.
    first = r.lg.a_full[0] if r.ch.kc_a[0] > 1 else r.lg.a_last[0]
    assert r.lg.a_first0[0] == np.asarray(first)[0]
    assert r.fix == r.c.has_fixpipe and not r.floor
