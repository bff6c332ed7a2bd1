"""The framework adapters on two CPU processes: Lightning's DDP strategy, and the Hugging
Face Trainer launched by torchrun (DDP through accelerate).

Each run is a subprocess under a timeout (a hang fails, never stalls the suite); each
test skips only when its library is not installed. Oracle: the run's data layout (the
global batch's rows in every record, one writer, the schedule's steps); the spectra
over ranks themselves are checked against one process in
tests/measure/test_tracker_distributed.py.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from specdyn.measure import read_spectra

HERE = Path(__file__).resolve().parent
TIMEOUT_S = 420


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE.parents[1] / "src"), os.environ.get("PYTHONPATH", "")]))


def _run(cmd: list[str], out: Path) -> None:
    try:
        res = subprocess.run(cmd, env=_env(), capture_output=True, timeout=TIMEOUT_S, cwd=out)
    except subprocess.TimeoutExpired as err:
        pytest.fail(f"two-process run did not finish in {TIMEOUT_S} s (a hang): "
                    f"{(err.stderr or b'').decode()[-3000:]}")
    assert res.returncode == 0, res.stderr.decode()[-4000:]


def _ranks(out: Path) -> list[dict]:
    return [json.loads((out / f"rank{r}.json").read_text()) for r in (0, 1)]


@pytest.mark.slow
def test_lightning_ddp_strategy_records_the_global_batch_once(tmp_path) -> None:
    try:
        import lightning.pytorch  # noqa: F401
    except ImportError:
        pytest.importorskip("pytorch_lightning")
    _run([sys.executable, str(HERE / "ranks_lightning.py"), str(tmp_path)], tmp_path)
    r0, r1 = _ranks(tmp_path)
    assert (r0["rank"], r0["world"], r1["rank"], r1["world"]) == (0, 2, 1, 2)
    assert r0["out"] == str(tmp_path / "spectra") and r1["out"] is None
    assert r0["n_records"] == r1["n_records"] == 3
    df = read_spectra(tmp_path / "spectra")
    assert sorted(df.step.unique()) == [0, 2, 5]
    # 32 rows a rank, two ranks: every record is of the global batch
    assert set(df[df.quantity == "activation_samples"].value) == {64.0}


@pytest.mark.slow
def test_huggingface_trainer_on_two_processes_records_the_global_batch(tmp_path) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    _run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
          "--master_port", str(port), str(HERE / "ranks_huggingface.py"), str(tmp_path)],
         tmp_path)
    r0, r1 = _ranks(tmp_path)
    assert (r0["world"], r1["world"], r0["n_records"], r1["n_records"]) == (2, 2, 3, 3)
    assert r1["out"] is None
    df = read_spectra(tmp_path / "spectra")
    assert sorted(df.step.unique()) == [0, 2, 4]
    rows = df[df.quantity == "activation_samples"].set_index("layer").value
    # 4 sequences of 16 tokens a process; the position embedding sees one sequence
    assert set(rows[rows.index == "transformer.wpe"]) == {2 * 16}
    assert set(rows[rows.index != "transformer.wpe"]) == {2 * 4 * 16}
