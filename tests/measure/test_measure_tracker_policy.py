"""SpectrumTracker's worker policy, precision, random state, final step and kill safety (issue 31,
issue 34 item 6).

Oracles: the float64 path of the same tracker (summaries within their own
intervals), torch's and numpy's generator states before and after, the
schedule, and a child process killed in the middle of writing a row file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import torch

from specdyn import Schedule
from specdyn.measure import SpectrumTracker, read_spectra


def _mlp(seed: int = 0) -> torch.nn.Sequential:
    gen = torch.Generator().manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(64, 96), torch.nn.ReLU(),
                                torch.nn.Linear(96, 96), torch.nn.ReLU(),
                                torch.nn.Linear(96, 10))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) / p.shape[-1] ** 0.5)
    return model


def test_policy_is_validated_in_one_line() -> None:
    with pytest.raises(ValueError, match="policy") as err:
        SpectrumTracker(_mlp(), policy="sometimes")
    msg = str(err.value)
    assert "\n" not in msg and "coalesce" in msg and "block" in msg
    with pytest.raises(ValueError, match="precision"):
        SpectrumTracker(_mlp(), precision="float16")


def _one_record_bytes(model: torch.nn.Module, x: torch.Tensor) -> int:
    """The bytes of one record's copies (a throwaway tracker's backlog after one record)."""
    probe = SpectrumTracker(model, schedule=[0], n_boot=0, fit=False)
    model(x)
    probe.step()
    probe.close(final=False)
    return probe.peak_pending_bytes


@pytest.mark.parametrize("period", [1, 100])
def test_coalescing_never_waits_and_drops_only_later_steps(tmp_path, capsys, period: int
                                                           ) -> None:
    """A worker held at its first record, room for eleven records' copies: thirty records
    fall due (every ``period`` steps); the first decade (steps below ten times the first
    positive one) stays queued, each later record replaces the one waiting before it, and
    close() says so in one line."""
    release = threading.Event()
    held = threading.Event()

    def slow(_rows: object) -> None:
        held.set()
        release.wait(timeout=600)

    model = _mlp(1)
    x = torch.randn(32, 64)
    one = _one_record_bytes(model, x)
    tracker = SpectrumTracker(model, schedule=Schedule.every(period), out=tmp_path, n_boot=0,
                              fit=False, on_record=slow, max_pending_bytes=int(11.5 * one))
    model(x)
    tracker.step()                     # step 0: the worker takes it, and is held
    assert held.wait(timeout=600)
    assert tracker.peak_pending_bytes == one

    def train() -> None:
        for _ in range(1, 30 * period):
            model(x)
            tracker.step()

    loop = threading.Thread(target=train)
    loop.start()
    loop.join(timeout=600)             # the worker is still held: step() must not wait for it
    assert not loop.is_alive(), "step() waited for the worker under policy='coalesce'"
    # one running, the nine kept, the newest waiting: within the bound
    assert tracker.peak_pending_bytes == 11 * one
    release.set()
    tracker.flush()                    # then close()'s own record (period 100) queues alone
    tracker.close()
    dropped = [period * s for s in range(10, 29)]
    note = capsys.readouterr().err.strip().splitlines()
    total = 30 + (period > 1)          # close() records the last step, 30 period - 1
    assert len(note) == 1 and note[0].startswith(
        f"SpectrumTracker: 19 of {total} scheduled records were coalesced into later ones "
        f"(steps {dropped[0]} .. {dropped[-1]}")
    assert "policy='block'" in note[0] and "modules=" in note[0] and "sparser" in note[0]
    df = read_spectra(tmp_path)
    kept = [period * s for s in [*range(10), 29]] + ([30 * period - 1] if period > 1 else [])
    assert sorted(int(s) for s in df.step.unique()) == kept
    assert "record_coalesced" not in set(df.quantity)      # measured steps only
    rec = json.loads((tmp_path / "record.json").read_text())
    assert rec["coalesced"] == [[s, 29 * period] for s in dropped]
    assert tracker.coalesced == [(s, 29 * period) for s in dropped]
    assert rec["config"]["policy"] == "coalesce"
    reasons = {s: why for s, layer, kind, why in tracker.skipped if kind == "record"}
    assert sorted(reasons) == dropped
    assert all("coalesced" in why for why in reasons.values())
    # The report reads the measured rows only: no "*" layer, the kept steps.
    from specdyn.report import write_report

    page = write_report(tmp_path).read_text()
    assert "id='weight-*'" not in page
    assert f"{len(kept)} recorded steps (0 .. {kept[-1]})" in page


def test_kept_records_beyond_the_bound_wait_instead_of_piling_up() -> None:
    """Bound 0 (as a record larger than the bound): a worker held at step 0, step 1 waits
    for it, and step 2's record, not droppable (the first decade), makes step() wait
    rather than hold a third record's copies; released, every step is measured."""
    release, held = threading.Event(), threading.Event()

    def slow(rows) -> None:  # noqa: ANN001
        if int(rows.step.iloc[0]) == 0:
            held.set()
            release.wait(timeout=600)

    model = _mlp(3)
    x = torch.randn(32, 64)
    tracker = SpectrumTracker(model, schedule=Schedule.every(1), n_boot=0, fit=False,
                              on_record=slow, max_pending_bytes=0)
    done = []

    def train() -> None:
        for _ in range(5):
            model(x)
            tracker.step()
            done.append(tracker.current_step)

    loop = threading.Thread(target=train, daemon=True)
    loop.start()
    assert held.wait(timeout=600)
    for _ in range(6000):                          # steps 0 and 1 return (however loaded)
        if len(done) >= 2:
            break
        loop.join(timeout=0.1)
    loop.join(timeout=1)
    assert loop.is_alive() and done == [1, 2]      # steps 0, 1 queued; step 2 waits
    assert tracker.peak_pending_bytes == 2 * _one_record_bytes(_mlp(3), x)
    release.set()
    loop.join(timeout=600)
    tracker.close()
    assert sorted(tracker.table().step.unique()) == [0, 1, 2, 3, 4] and not tracker.coalesced


def test_block_policy_records_every_step_behind_a_slow_worker() -> None:
    release = threading.Event()
    model = _mlp(2)
    tracker = SpectrumTracker(model, schedule=Schedule.every(1), n_boot=0, fit=False,
                              policy="block", on_record=lambda rows: release.wait(600))
    x = torch.randn(32, 64)

    def train() -> None:
        for _ in range(4):
            model(x)
            tracker.step()

    loop = threading.Thread(target=train)
    loop.start()
    release.set()
    loop.join()
    tracker.close()
    assert sorted(tracker.table().step.unique()) == [0, 1, 2, 3]
    assert tracker.coalesced == []


def test_summaries_in_float32_agree_with_the_float64_reference() -> None:
    """Exponents, MP fits and outlier counts of precision='auto' against 'float64'."""
    gen = torch.Generator().manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(128, 384), torch.nn.GELU(),
                                torch.nn.Linear(384, 256))
    with torch.no_grad():  # a spiked weight: outliers to count
        u = torch.randn(384, 1, generator=gen)
        w = torch.randn(1, 128, generator=gen)
        model[0].weight.add_(0.4 * u @ w / 128 ** 0.5)
    x = torch.randn(1024, 128, generator=gen)
    tabs = {}
    for prec in ("auto", "float64"):
        tr = SpectrumTracker(model, schedule=[0], n_boot=200, background=False, precision=prec)
        model(x)
        tr.step()
        df = tr.table()
        tr.close()
        tabs[prec] = df[(df.step == 0) & (df["rank"] == 0)].set_index(["layer", "quantity"])[
            "value"]
    a, b = tabs["auto"], tabs["float64"]
    checked = 0
    for layer, q in b.index:
        if not q.endswith("_exponent") or q.endswith("density_exponent"):
            continue
        lo, hi = b[(layer, q + "_ci_low")], b[(layer, q + "_ci_high")]
        assert lo <= a[(layer, q)] <= hi, (layer, q)
        checked += 1
    for layer, q in b.index:
        if q.endswith("_mp_sigma2"):
            assert a[(layer, q)] == pytest.approx(b[(layer, q)], rel=1e-3), (layer, q)
            checked += 1
        if q.endswith("_n_outliers"):
            assert a[(layer, q)] == b[(layer, q)], (layer, q)
            checked += 1
    assert checked >= 8
    assert b[("0", "weight_n_outliers")] >= 1        # the spike is seen by both


def _rows(df, layer: str, kind: str):
    return df[(df.layer == layer) & df.quantity.str.startswith(kind)].sort_values(
        ["quantity", "rank"]).reset_index(drop=True)


def test_wide_range_spectra_take_the_float64_path_and_match() -> None:
    """A weight whose power law runs below float32's resolution is redone in float64.

    Layer "2": singular values ``k^-1.5`` (eigenvalues ``k^-3``, 6.6 decades over 160
    ranks; float32 resolves about 3.6), a power law over the whole spectrum, so the
    fit's window reaches eigenvalues float32 does not resolve: its rows must be the
    float64 tracker's, bit for bit, at the first record (float32 tried, redone) and
    the next (float64 at once). Layer "0" (i.i.d.) stays in float32: its eigenvalues
    differ from float64's in the last digits only, its summaries within their intervals.
    """
    gen = torch.Generator().manual_seed(5)
    # smaller sides >= 128: below, the tracker takes float64 at once
    model = torch.nn.Sequential(torch.nn.Linear(160, 192), torch.nn.Tanh(),
                                torch.nn.Linear(192, 160))
    with torch.no_grad():
        model[0].weight.copy_(torch.randn(192, 160, generator=gen) / 160 ** 0.5)
        U = torch.linalg.qr(torch.randn(160, 160, generator=gen)).Q
        V = torch.linalg.qr(torch.randn(192, 160, generator=gen)).Q
        s = torch.arange(1, 161, dtype=torch.float32) ** -1.5
        model[2].weight.copy_(U @ torch.diag(s) @ V.T)
    x = torch.randn(512, 160, generator=gen)
    tabs, costs = {}, {}
    for prec in ("auto", "float64"):
        tr = SpectrumTracker(model, schedule=[0, 1], n_boot=200, background=False,
                             precision=prec, activations=False)
        for _ in range(2):
            model(x)
            tr.step()
        tabs[prec], costs[prec] = tr.table(), tr.record_costs
        tr.close()
    a, b = tabs["auto"], tabs["float64"]
    lam = _rows(b, "2", "weight_eigenvalue").value.to_numpy()
    assert lam.min() / lam[0] < 1e-5                # the range float32 cannot resolve
    assert [c["redone_float64"] for c in costs["auto"]] == [1, 0]   # tried once, then float64
    for step in (0, 1):
        wa, wb = (_rows(t[t.step == step], "2", "weight") for t in (a, b))
        assert len(wa) > 160 and np.array_equal(wa.value.to_numpy(), wb.value.to_numpy())
    ea, eb = (_rows(t[t.step == 0], "0", "weight_eigenvalue").value.to_numpy() for t in (a, b))
    assert not np.array_equal(ea, eb)                                # float32 ...
    assert np.max(np.abs(ea - eb)) < 1e-5 * eb[0]                    # ... to its round-off
    sa, sb = (t[(t.step == 0) & (t.layer == "0") & (t["rank"] == 0)].set_index("quantity")[
        "value"] for t in (a, b))
    assert sb["weight_exponent_ci_low"] <= sa["weight_exponent"] <= sb["weight_exponent_ci_high"]
    assert sa["weight_n_outliers"] == sb["weight_n_outliers"]
    assert sa["weight_mp_sigma2"] == pytest.approx(sb["weight_mp_sigma2"], rel=1e-3)


def test_float32_suffices_reads_what_the_summaries_read() -> None:
    """The a-posteriori rule on spectra with a known error bound."""
    from specdyn.measure._summary_process import float32_suffices
    from specdyn.measure.summary import summarize_spectrum

    k = np.arange(1, 201, dtype=np.float64)
    flat_tail = np.concatenate([k[:150] ** -0.5, np.full(50, 1e-9)])  # fit window on the top
    steep = k ** -4.0                       # a power law down to 6e-10 of the largest
    # resolved: a window on the top, a flat unresolved tail; not: the whole power law;
    # an exact spectrum (error 0) and a tiny error: everything resolved
    for eigs, error, ok in ((flat_tail, 1e-7, True), (steep, 1e-7, False),
                            (steep, 0.0, True), (steep, 1e-14, True)):
        summ = summarize_spectrum(eigs, 0.5, n_samples=400.0, n_boot=100)
        assert float32_suffices(summ, eigs, error) is ok, (eigs[-1], error)


def _states() -> tuple[torch.Tensor, list[torch.Tensor], tuple]:
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []
    return torch.get_rng_state(), cuda, np.random.get_state()  # noqa: NPY002 - the global one


def test_a_top_k_record_leaves_the_global_generators_alone() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(40, 60))
    tr = SpectrumTracker(model, schedule=[0], max_dense=20, top=8, background=False,
                         fit=False)
    torch.manual_seed(123)
    np.random.seed(7)  # noqa: NPY002 - the global state the tracker must not touch
    before_cpu, before_cuda, before_np = _states()
    model(torch.randn(50, 40, generator=torch.Generator().manual_seed(0)))
    tr.step()
    after_cpu, after_cuda, after_np = _states()
    assert torch.equal(before_cpu, after_cpu)
    assert all(torch.equal(b, a) for b, a in zip(before_cuda, after_cuda, strict=True))
    assert before_np[0] == after_np[0] and np.array_equal(before_np[1], after_np[1])
    df = tr.table()
    tr.close()
    # the top-k path was taken: 8 eigenvalues, the MP fit skipped with that reason ...
    w = df[(df.layer == "0") & (df.quantity == "weight_eigenvalue")]
    assert len(w) == 8
    assert any("max_dense" in why for _, _, _, why in tr.skipped)
    # ... and its values are the top of the exact spectrum (randomized SVD on an almost
    # flat spectrum: 4 power iterations leave ~1e-3 relative error in the 8th)
    W = model[0].weight.detach().double().numpy()
    ref = np.linalg.svd(W, compute_uv=False)[:8] ** 2 / W.shape[0]
    assert w.sort_values("rank").value.to_numpy() == pytest.approx(ref, rel=1e-2)


# -- the worker's CUDA stream (issue 31 item 2) -----------------------------------------
# No GPU here: torch.cuda's stream and event types are replaced by fakes that log what is
# asked of them, in order; the protocol is what these tests check, the overlap itself is
# measured by benchmarks/gpu_tracker.sh on a lent device.

class _FakeCuda:
    """``torch.cuda.Event``, ``Stream``, ``stream`` and ``current_stream``, logging each call."""

    def __init__(self) -> None:
        self.log: list[tuple] = []
        self.active: list[str] = []  # the streams entered, innermost last
        outer = self

        class Event:
            def record(self, stream: str) -> None:
                outer.log.append(("record", id(self), stream, threading.current_thread().name))

        class Stream:
            def __init__(self, device: torch.device) -> None:
                self.name = f"side:{device}"
                outer.log.append(("new stream", self.name))

            def wait_event(self, event: object) -> None:
                outer.log.append(("wait", self.name, id(event)))

            def synchronize(self) -> None:
                outer.log.append(("synchronize", self.name))

        class Context:
            def __init__(self, stream: Stream) -> None:
                self.stream = stream

            def __enter__(self) -> None:
                outer.active.append(self.stream.name)
                outer.log.append(("enter", self.stream.name))

            def __exit__(self, *exc: object) -> None:
                outer.active.remove(self.stream.name)
                outer.log.append(("exit", self.stream.name))

        self.Event, self.Stream, self.stream = Event, Stream, Context

    def current_stream(self, device: torch.device) -> str:
        return f"training:{device}"

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in ("Event", "Stream", "stream", "current_stream"):
            monkeypatch.setattr(torch.cuda, name, getattr(self, name))


class _FakeTensor:
    """Stands for a copy on a device: what ``Job`` reads of a tensor."""

    def __init__(self, device: str) -> None:
        self.device = torch.device(device)

    def nelement(self) -> int:
        return 4

    def element_size(self) -> int:
        return 4


def test_side_stream_waits_for_the_copies_and_syncs_before_release(monkeypatch) -> None:
    from specdyn.measure import _tracker_hooks as hooks

    Job, SideStreams = hooks.Job, hooks.SideStreams
    fake = _FakeCuda()
    fake.install(monkeypatch)
    job = Job(3, [("w", _FakeTensor("cuda:1")), ("v", _FakeTensor("cpu"))],
              [("h", [_FakeTensor("cuda:0"), _FakeTensor("cuda:1")])])
    streams = SideStreams()
    SideStreams.mark(job)
    # one event per CUDA device, on that device's current (training) stream; none for CPU
    records = [e for e in fake.log if e[0] == "record"]
    assert [r[2] for r in records] == ["training:cuda:0", "training:cuda:1"]
    assert [d for d, _ in job.ready] == [torch.device("cuda:0"), torch.device("cuda:1")]
    fake.log.clear()
    with streams.use(job):
        fake.log.append(("work", tuple(fake.active)))
    events = [id(e) for _, e in job.ready]
    assert fake.log == [
        ("new stream", "side:cuda:0"), ("wait", "side:cuda:0", events[0]),
        ("enter", "side:cuda:0"),
        ("new stream", "side:cuda:1"), ("wait", "side:cuda:1", events[1]),
        ("enter", "side:cuda:1"),
        ("work", ("side:cuda:0", "side:cuda:1")),
        ("synchronize", "side:cuda:0"), ("synchronize", "side:cuda:1"),
        ("exit", "side:cuda:1"), ("exit", "side:cuda:0")]
    # the streams are kept: the next job waits on them again, none is created
    fake.log.clear()
    job2 = Job(4, [("w", _FakeTensor("cuda:0"))], [])
    SideStreams.mark(job2)
    with pytest.raises(RuntimeError, match="boom"), streams.use(job2):
        raise RuntimeError("boom")
    assert not any(e[0] == "new stream" for e in fake.log)
    assert ("synchronize", "side:cuda:0") in fake.log  # synchronised on an error too
    assert fake.active == []


def test_worker_measures_on_the_side_stream_and_cpu_copies_touch_no_cuda(
        monkeypatch) -> None:
    """The tracker's wiring: marked on the training thread, measured inside ``use``."""
    from specdyn.measure import _tracker_hooks as hooks
    from specdyn.measure import _tracker_measure as record_math

    def no_cuda(*_a: object, **_k: object) -> None:
        raise AssertionError("a CUDA call for copies on a CPU")

    for name in ("Event", "Stream", "stream", "current_stream"):
        monkeypatch.setattr(torch.cuda, name, no_cuda)
    model = _mlp(2)
    tr = SpectrumTracker(model, schedule=[0, 1], n_boot=0, fit=False)
    _train(model, tr, 1)
    tr.flush()
    assert tr.n_records == 1  # CPU copies: no stream, no event, no CUDA call

    fake = _FakeCuda()
    fake.install(monkeypatch)
    seen: list[tuple[str, tuple[str, ...]]] = []
    measure = record_math.RecordMath.measure

    def spy(self, job, cost, out, given=()):  # type: ignore[no-untyped-def]
        seen.append((threading.current_thread().name, tuple(fake.active)))
        return measure(self, job, cost, out, given)

    def mark(job: hooks.Job) -> None:  # as if the copies were on cuda:0
        fake.log.append(("mark", threading.current_thread().name))
        job.ready.append((torch.device("cuda:0"), fake.Event()))

    monkeypatch.setattr(record_math.RecordMath, "measure", spy)
    monkeypatch.setattr(hooks.SideStreams, "mark", staticmethod(mark))
    _train(model, tr, 1)
    tr.close()
    assert tr.n_records == 2
    assert fake.log[0] == ("mark", threading.main_thread().name)
    assert seen == [("specdyn-tracker", ("side:cuda:0",))]
    assert ("synchronize", "side:cuda:0") in fake.log and fake.active == []


# -- the last step (issue 34 item 6) ---------------------------------------------------

def _train(model: torch.nn.Module, tracker: SpectrumTracker, n: int) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for it in range(n):
        x = torch.randn(16, 64, generator=torch.Generator().manual_seed(it))
        loss = model(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        tracker.step()


def test_close_records_the_last_step_the_schedule_missed() -> None:
    model = _mlp(4)
    tracker = SpectrumTracker(model, n_boot=0, policy="block")   # no steps=: per_decade
    _train(model, tracker, 300)
    tracker.close()
    steps = sorted(tracker.table().step.unique())
    sched = Schedule.per_decade(10).predicate()
    assert max(s for s in range(300) if sched(s)) < 299   # the schedule alone misses it
    assert steps[-1] == 299
    W = model[4].weight.detach().double().numpy()
    ref = np.linalg.svd(W, compute_uv=False) ** 2 / W.shape[0]
    df = tracker.table()
    got = df[(df.step == 299) & (df.layer == "4") & (df.quantity == "weight_eigenvalue")]
    assert np.max(np.abs(got.sort_values("rank").value.to_numpy() - ref)) < 1e-5 * ref[0]
    assert any(s == 299 and kind == "activation" and "close()" in why
               for s, _, kind, why in tracker.skipped)


def test_context_manager_records_the_last_step_only_on_a_clean_exit() -> None:
    model = _mlp(5)
    with SpectrumTracker(model, schedule=[0, 3], n_boot=0) as tr:
        _train(model, tr, 6)
    assert sorted(tr.table().step.unique()) == [0, 3, 5]
    model = _mlp(5)
    with pytest.raises(RuntimeError, match="boom"), \
            SpectrumTracker(model, schedule=[0, 3], n_boot=0) as tr2:
        _train(model, tr2, 6)
        raise RuntimeError("boom")
    assert sorted(tr2.table().step.unique()) == [0, 3]
    model = _mlp(5)
    with SpectrumTracker(model, schedule=[0, 3], n_boot=0) as tr3:  # already recorded
        _train(model, tr3, 4)
    assert sorted(tr3.table().step.unique()) == [0, 3]


# -- kill safety ------------------------------------------------------------------------

_KILLED_WRITER = """
import os, signal, sys, torch
import pandas as pd
from specdyn import Schedule
from specdyn.measure import SpectrumTracker
out, kill_at = sys.argv[1], int(sys.argv[2])
real = pd.DataFrame.to_parquet
n = [0]
def to_parquet(self, path, *a, **k):
    n[0] += 1
    if n[0] == kill_at:  # half a file on disk, then a hard kill mid-write
        real(self, path, *a, **k)
        size = os.path.getsize(path)
        with open(path, "r+b") as fh:
            fh.truncate(size // 2)
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self, path, *a, **k)
pd.DataFrame.to_parquet = to_parquet
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
tr = SpectrumTracker(model, schedule=Schedule.every(1), out=out, n_boot=0, policy="block")
for i in range(10):
    model(torch.randn(64, 16))
    tr.step()
tr.close()
"""


def test_a_run_killed_while_writing_leaves_only_whole_records(tmp_path) -> None:
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(__file__).parents[2] / "src"), os.environ.get("PYTHONPATH", "")]))
    res = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(out), "4"], env=env,
                         capture_output=True, timeout=600)
    assert res.returncode == -signal.SIGKILL, res.stderr.decode()[-2000:]
    rows = out / "rows"
    leftovers = sorted(p.name for p in rows.iterdir() if p.name.startswith("."))
    assert len(leftovers) == 1 and leftovers[0].endswith(".tmp")   # the half-written one
    assert sorted(p.name for p in rows.glob("step-*.parquet")) == [
        f"step-{s:012d}.parquet" for s in range(3)]                   # three whole records
    df = read_spectra(out)                                           # every file reads whole
    assert sorted(df.step.unique()) == [0, 1, 2]
    rec = json.loads((out / "record.json").read_text())             # and the record parses
    assert rec["status"] == "running"
    # A new tracker on the folder clears the leftover before it writes.
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 4))
    SpectrumTracker(model, schedule=[0], out=out, overwrite=True, n_boot=0).close()
    assert not [p for p in rows.iterdir() if p.name.startswith(".")]


def test_batched_spectra_equal_the_per_matrix_float64_ones() -> None:
    """Mixed shapes, centring, a true rank bound and a wrong one, against gram_eigenvalues."""
    from specdyn.measure.spectra import batched_gram_eigenvalues, gram_eigenvalues

    g = torch.Generator().manual_seed(4)
    low = torch.randn(300, 20, generator=g) @ torch.randn(20, 200, generator=g)  # rank 20
    mats = [torch.randn(40, 30, generator=g), torch.randn(40, 30, generator=g),
            torch.randn(30, 50, generator=g), low, low + 0.0, torch.randn(300, 200, generator=g)]
    center = [False, True, True, True, False, True]
    ranks = [None, None, None, 20, 20, 20]       # the last bound is wrong
    got = batched_gram_eigenvalues(mats, center, ranks=ranks)
    for X, c, e in zip(mats, center, got, strict=True):
        ref = gram_eigenvalues(X, center=c)
        assert e.shape == ref.shape
        assert np.max(np.abs(e - ref)) < 1e-5 * ref[0]
    assert np.count_nonzero(got[3]) == 20 and np.count_nonzero(got[5]) >= 190
    assert got[2][-1] == 0.0                      # the centring's zero, exactly
    f64 = batched_gram_eigenvalues(mats, center, ranks=ranks, precision="float64")
    started = batched_gram_eigenvalues(mats, center, ranks=ranks, start64=[True] * len(mats))
    for X, c, e, e2 in zip(mats, center, f64, started, strict=True):
        ref = gram_eigenvalues(X, center=c)
        assert np.max(np.abs(e - ref)) < 1e-12 * ref[0]
        assert np.max(np.abs(e2 - ref)) < 1e-12 * ref[0]    # float64 from the start


@pytest.mark.parametrize("scale", [1e-30, 1e-13, 1.0, 1e13, 1e30])
def test_float32_batched_spectra_hold_entries_far_from_one(scale: float) -> None:
    """Float32 Grams of entries from 1e-30 to 1e30: rescaled where needed, scaled back in
    float64 (a float32 scale's square would overflow or underflow)."""
    from specdyn.measure.spectra import batched_gram_eigenvalues, gram_eigenvalues

    X = torch.randn(300, 200, generator=torch.Generator().manual_seed(0)) * scale
    got = batched_gram_eigenvalues([X], precision="float32")[0]
    ref = gram_eigenvalues(X.double())
    assert np.all(np.isfinite(got)) and ref[0] > 0
    assert np.max(np.abs(got - ref)) < 1e-5 * ref[0]


@pytest.mark.parametrize("n", [300, 30])          # QR of the input; the input itself
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_linear_output_spectrum_from_its_input_equals_the_output_spectrum(
        n: int, dtype: torch.dtype) -> None:
    """Eigenvalues of a centred ``Linear(40, 120)`` output (with bias, inputs off-centre)
    from the input and weight: the output's own float64 spectrum, its rank's zeros, its
    trace."""
    from specdyn.measure.spectra import gram_eigenvalues, linear_output_eigenvalues

    g = torch.Generator().manual_seed(6)
    lin = torch.nn.Linear(40, 120)
    with torch.no_grad():
        lin.bias.copy_(torch.randn(120, generator=g) * 3)
    X = torch.randn(n, 40, generator=g) @ torch.randn(40, 40, generator=g) + 2.0
    ref = gram_eigenvalues(lin.double()(X.double()).detach(), center=True)
    eigs, trace, cond = linear_output_eigenvalues(X.to(dtype), lin.weight.detach().to(dtype))
    tol = 1e-5 if dtype == torch.float32 else 1e-10
    assert eigs.shape == ref.shape == (min(n, 120),)
    assert np.max(np.abs(eigs - ref)) < tol * ref[0]
    rank = min(40, n - 1)
    assert np.all(eigs[rank:] == 0.0) and eigs[rank - 1] > 0.0
    assert trace == pytest.approx(ref.sum(), rel=tol) and cond >= 1.0
    with pytest.raises(ValueError, match="W must be"):
        linear_output_eigenvalues(X, lin.weight.detach().T)


def test_tracker_takes_a_widening_linear_output_from_its_input(monkeypatch) -> None:
    """A ``Linear(48, 160)`` output kept as input and weight: the spectrum and summaries of
    the output kept itself (``Hooks.inputs`` off), and the float64 oracle's eigenvalues."""
    from specdyn.measure import _tracker_measure as record_math

    calls: list[tuple[int, ...]] = []
    real = record_math.linear_output_eigenvalues

    def spy(X, W, **kw):
        calls.append(tuple(X.shape))
        return real(X, W, **kw)

    monkeypatch.setattr(record_math, "linear_output_eigenvalues", spy)
    gen = torch.Generator().manual_seed(8)
    lin = torch.nn.Linear(48, 160)
    with torch.no_grad():
        lin.weight.copy_(torch.randn(160, 48, generator=gen) / 48 ** 0.5)
    model = torch.nn.Sequential(lin, torch.nn.ReLU())
    x = torch.randn(400, 48, generator=gen) + 1.0
    tabs = {}
    for inputs in (True, False):
        tr = SpectrumTracker(model, modules=["0"], schedule=[0], n_boot=0, background=False,
                             weights=False)
        tr._hooks.inputs = inputs
        model(x)
        tr.step()
        tabs[inputs] = tr.table()
        tr.close()
    assert calls == [(400, 48)]                       # the input, once: the first tracker
    a, b = (_rows(tabs[k], "0", "activation") for k in (True, False))
    assert list(a.quantity) == list(b.quantity)
    ea = a[a.quantity == "activation_eigenvalue"].value.to_numpy()
    eb = b[b.quantity == "activation_eigenvalue"].value.to_numpy()
    Y = lin.double()(x.double()).detach().numpy()
    Yc = Y - Y.mean(axis=0)
    ref = np.sort(np.linalg.eigvalsh(Yc.T @ Yc / 400))[::-1]
    assert ea.size == 160 and np.all(ea[48:] == 0.0)
    assert np.max(np.abs(ea - ref)) < 1e-5 * ref[0]
    assert np.max(np.abs(eb - ref)) < 1e-5 * ref[0]
    sa, sb = (t[t["rank"] == 0].set_index("quantity")["value"] for t in (a, b))
    assert len(sb) >= 3 and list(sa.index) == list(sb.index)   # samples and the fit's columns
    assert sa.to_numpy() == pytest.approx(sb.to_numpy(), rel=1e-3, abs=1e-9)


def _spiked_linear_input(gen: torch.Generator, n: int, d_in: int, decades: float
                         ) -> torch.Tensor:
    """``n x d_in`` rows, off-centre, whose covariance spans ``decades`` with 3 outliers."""
    U = torch.linalg.qr(torch.randn(d_in, d_in, generator=gen, dtype=torch.float64)).Q
    s = 10 ** (-0.5 * decades * torch.linspace(0, 1, d_in, dtype=torch.float64))
    s[:3] *= torch.tensor([30.0, 20.0, 12.0], dtype=torch.float64)
    return (torch.randn(n, d_in, generator=gen, dtype=torch.float64) * s) @ U.T + 2.0


@pytest.mark.parametrize("decades", [1.0, 7.0])      # a few decades; beyond float32's reach
def test_linear_output_cholesky_route_is_within_its_stated_bound(decades: float) -> None:
    """The Cholesky route (``n > d_in``, ``W^T W`` positive definite) against the output's
    own float64 spectrum: float32 within ``rank_tolerance(lambda_1, (n, d_out), float32)``
    times its amplification ``c^2`` (``c = ||X_c|| ||W|| / ||Y_c||``, float64 norms), the
    outliers too; float64 to 1e-10."""
    from specdyn.measure.spectra import (
        gram_eigenvalues,
        linear_output_eigenvalues,
        rank_tolerance,
    )

    gen = torch.Generator().manual_seed(11)
    n, d_in, d_out = 600, 64, 256
    X = _spiked_linear_input(gen, n, d_in, decades)
    W = torch.randn(d_out, d_in, generator=gen, dtype=torch.float64) / d_in ** 0.5
    W[:, 0] *= 8.0                                    # a spiked weight as well
    Xc = X - X.mean(dim=0)
    ref = gram_eigenvalues(Xc @ W.T)
    c = float(torch.linalg.matrix_norm(Xc, 2) * torch.linalg.matrix_norm(W, 2)
              / torch.linalg.matrix_norm(Xc @ W.T, 2))
    e64, _, amp64 = linear_output_eigenvalues(X, W)
    assert np.max(np.abs(e64 - ref)) < 1e-10 * ref[0]
    e32, trace, amp = linear_output_eigenvalues(X.float(), W.float())
    assert amp == pytest.approx(c**2, rel=0.05) and amp64 == pytest.approx(c**2, rel=0.05)
    bound = rank_tolerance(float(e32[0]), (n, d_out), torch.float32) * amp
    assert np.max(np.abs(e32 - ref)) <= bound
    assert np.all(e32[d_in:] == 0.0) and trace == pytest.approx(ref.sum(), rel=1e-4)
    if decades > 6:                                   # the bound is honest: it does not
        assert ref[d_in - 1] < bound                  # claim the smallest are resolved


def test_linear_output_falls_back_to_qr_when_the_weight_is_singular() -> None:
    """A weight with a zero column (``W^T W`` singular: no Cholesky): the QR route, the
    same spectrum, amplification ``c`` (not ``c^2``)."""
    from specdyn.measure.spectra import gram_eigenvalues, linear_output_eigenvalues

    gen = torch.Generator().manual_seed(12)
    X = _spiked_linear_input(gen, 400, 48, 2.0)
    W = torch.randn(160, 48, generator=gen, dtype=torch.float64) / 48 ** 0.5
    W[:, 5] = 0.0
    Xc = X - X.mean(dim=0)
    ref = gram_eigenvalues(Xc @ W.T)
    c = float(torch.linalg.matrix_norm(Xc, 2) * torch.linalg.matrix_norm(W, 2)
              / torch.linalg.matrix_norm(Xc @ W.T, 2))
    for dtype, tol in ((torch.float64, 1e-10), (torch.float32, 1e-5)):
        e, _, amp = linear_output_eigenvalues(X.to(dtype), W.to(dtype))
        assert np.max(np.abs(e - ref)) < tol * ref[0]
        assert amp == pytest.approx(c, rel=0.05)
        assert e[46] > 0 and np.all(e[47:] < 1e-6 * ref[0])   # rank 47: the zero column


def test_a_float64_matrix_returns_to_float32_only_with_a_margin(monkeypatch) -> None:
    """Hysteresis of the precision memory: a matrix redone in float64 is checked at
    ``_tracker_measure.F32_RETURN`` (2) times its float32 bound while it stays in float64,
    so one at the rule's boundary does not alternate (a float32 try and a redo every
    other record)."""
    from specdyn.measure import _summary_process as summaries

    errors: list[float] = []

    def at_the_boundary(summ, eigs, error, trace=float("nan")) -> bool:
        errors.append(error)
        # fails its first (float32) check, then passes below 1.5 times that bound
        return len(errors) > 1 and error < 1.5 * errors[0]

    monkeypatch.setattr(summaries, "float32_suffices", at_the_boundary)
    gen = torch.Generator().manual_seed(14)
    model = torch.nn.Linear(192, 160)
    with torch.no_grad():
        model.weight.copy_(torch.randn(160, 192, generator=gen) / 192 ** 0.5)
    tr = SpectrumTracker(model, schedule=Schedule.every(1), n_boot=0, background=False,
                         activations=False)
    for _ in range(4):
        tr.step()
    tr.close()
    ratio = [e / errors[0] for e in errors]
    # record 0: float32 (1x), redone in float64 (checked at the margin); records 1-3:
    # float64 at once, checked at the margin, so never back to float32
    assert len(ratio) == 5 and ratio[0] == 1.0
    assert all(r == pytest.approx(2.0, rel=1e-6) for r in ratio[1:])
    assert [c["redone_float64"] for c in tr.record_costs[:4]] == [1, 0, 0, 0]
