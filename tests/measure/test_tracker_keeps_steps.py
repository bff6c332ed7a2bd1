"""A default SpectrumTracker keeps every scheduled step of a short log schedule.

Oracle: the schedule itself (``Schedule.log(30).resolve(steps)``), the stopwatch
(the first scheduled steps fall within a second of building the tracker, while
the summary process is still starting), and what ``close()`` prints (nothing).
"""

from __future__ import annotations

import time

import torch

from specdyn import Schedule
from specdyn.measure import SpectrumTracker, read_spectra


def test_a_default_tracker_keeps_every_step_of_a_30_step_log_schedule(tmp_path, capsys) -> None:
    """An MLP on a teacher task, 600 steps of about a millisecond: the whole run is over
    before the measurement of its first records is; nothing is coalesced."""
    g = torch.Generator().manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 8))
    teacher = torch.randn(32, 8, generator=g)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    steps = 600
    t0 = time.perf_counter()
    tracker = SpectrumTracker(model, schedule=Schedule.log(30), steps=steps - 1, out=tmp_path)
    first_steps = None
    for it in range(steps):
        x = torch.randn(128, 32, generator=g)
        loss = ((model(x) - torch.tanh(x @ teacher)) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        tracker.step()
        if it == 9:
            first_steps = time.perf_counter() - t0
    train_s = time.perf_counter() - t0
    tracker.close()
    scheduled = [int(s) for s in Schedule.log(30).resolve(steps - 1)]
    assert len(scheduled) >= 25
    assert first_steps is not None and first_steps < 1.0  # the case the test is about
    df = read_spectra(tmp_path)
    assert sorted(int(s) for s in df.step.unique()) == scheduled, (train_s, tracker.coalesced)
    assert tracker.coalesced == [] and tracker.n_records == len(scheduled)
    assert capsys.readouterr().err == ""                  # close() had nothing to say
    # every record is whole: weights and activations of each layer at every step
    per_step = df[df.quantity.isin(["weight_lambda_max", "activation_lambda_max"])].groupby(
        "step").size()
    assert set(per_step) == {6}


def test_training_is_bit_identical_with_a_default_tracker(tmp_path) -> None:
    """The same seed trains to the same bits with and without a (default) tracker: 400
    SGD steps with momentum on digits-sized inputs, batches drawn from torch's global
    generator (which the tracker must not touch), every loss compared."""
    def run(tracked: bool) -> tuple[list[float], dict[str, torch.Tensor]]:
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                                    torch.nn.Linear(128, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        X, y = torch.randn(512, 64), torch.randint(0, 10, (512,))
        tr = SpectrumTracker(model, out=tmp_path / "run") if tracked else None
        losses = []
        for _ in range(400):
            idx = torch.randint(0, 512, (64,))
            loss = torch.nn.functional.cross_entropy(model(X[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            if tr is not None:
                tr.step()
        if tr is not None:
            tr.close()
            # it measured every step of the default schedule, and close() the last, 399
            assert tr.n_records == len(Schedule.per_decade(10).resolve(399)) and not tr.coalesced
        return losses, {k: v.clone() for k, v in model.state_dict().items()}

    bare, tracked = run(False), run(True)
    assert bare[0] == tracked[0]
    assert all(torch.equal(bare[1][k], tracked[1][k]) for k in bare[1])
