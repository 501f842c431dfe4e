"""The calibration tests' shared simulations (tests/support/shared_sims.py) answer only the
question asked: a stored result of the same inputs and model version, else a fresh simulation."""

from __future__ import annotations

from pathlib import Path

import pytest

import tests.support.shared_sims as shared
from simcore.pipeline.simulator import SimResult, simulate
from tests.support.board import torch_mm_cases
from tests.support.shared_sims import SharedSimulations

_SMALL = next(c for c in torch_mm_cases() if c.name == "torch.mm fp16 1024")
_OTHER = next(c for c in torch_mm_cases() if c.name == "torch.mm fp16 2048")


def _shared(directory: Path, case_name: str) -> SimResult:
    case = _SMALL if case_name == _SMALL.name else _OTHER
    return SharedSimulations(directory).simulate(case.problem, case.tiling, case.preset)


def test_another_process_reads_the_stored_result_without_simulating(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _shared(tmp_path, _SMALL.name)

    def no_simulation(*args: object) -> SimResult:
        raise AssertionError("simulated again")

    # A new instance stands for the other xdist worker of the run.
    monkeypatch.setattr(shared, "simulate", no_simulation)
    again = _shared(tmp_path, _SMALL.name)
    assert again.device_time_us == first.device_time_us
    assert again.busy_cycles == first.busy_cycles


def test_a_stored_file_of_other_inputs_is_not_used(tmp_path: Path) -> None:
    _shared(tmp_path, _SMALL.name)
    (own,) = tmp_path.glob("*.pickle")
    # The small kernel's file now holds the other kernel's inputs and result.
    _shared(tmp_path / "other", _OTHER.name)
    (other,) = (tmp_path / "other").glob("*.pickle")
    own.write_bytes(other.read_bytes())
    result = _shared(tmp_path, _SMALL.name)
    fresh = simulate(_SMALL.problem, _SMALL.tiling, _SMALL.preset)
    assert result.device_time_us == fresh.device_time_us
    assert result.device_time_us != _shared(tmp_path / "other", _OTHER.name).device_time_us


def test_another_model_version_is_simulated_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _shared(tmp_path, _SMALL.name)
    monkeypatch.setattr(shared, "MODEL_VERSION", "another")
    calls: list[object] = []

    def counted(*args: object) -> SimResult:
        calls.append(args)
        return simulate(_SMALL.problem, _SMALL.tiling, _SMALL.preset)

    monkeypatch.setattr(shared, "simulate", counted)
    _shared(tmp_path, _SMALL.name)
    assert len(calls) == 1
    assert len(list(tmp_path.glob("*.pickle"))) == 2
