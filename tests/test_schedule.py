"""One meaning of a schedule int: the same steps in a simulator and in a tracker."""

from __future__ import annotations

import pytest
import torch

from specdyn import PowerLawSetting, Schedule
from specdyn.measure import SpectrumTracker
from specdyn.sim import train_linear


def _per_decade_oracle(n: int, top: int) -> list[int]:
    """0 and round(10**(j/n)) for j = 0, 1, ... up to ``top``, written out directly."""
    out = {0}
    j = 0
    while round(10 ** (j / n)) <= top:
        out.add(round(10 ** (j / n)))
        j += 1
    return sorted(out)


@pytest.mark.parametrize("n", [1, 3, 10])
def test_per_decade_without_a_length_matches_its_definition(n: int) -> None:
    due = Schedule.per_decade(n).predicate()
    assert [s for s in range(2001) if due(s)] == _per_decade_oracle(n, 2000)
    assert not due(-1)


def test_per_decade_ten_is_the_trackers_log_grid() -> None:
    due = Schedule.per_decade(10).predicate()
    assert [s for s in range(41) if due(s)] == [0, 1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25,
                                                32, 40]


@pytest.mark.parametrize("sched", [Schedule.log(7), Schedule.even(5), Schedule.every(9),
                                   Schedule.per_decade(4), Schedule.at([0, 3, 50])])
def test_resolve_due_and_predicate_agree(sched: Schedule) -> None:
    steps = 50
    resolved = sched.resolve(steps).tolist()
    assert resolved == [s for s in range(steps + 1) if sched.due(s, steps)]
    assert resolved == [s for s in range(steps + 1) if sched.predicate(steps)(s)]


def test_per_decade_with_a_length_adds_the_last_step() -> None:
    assert Schedule.per_decade(2).resolve(50).tolist() == [0, 1, 3, 10, 32, 50]
    assert Schedule.per_decade(2).resolve(0).tolist() == [0]
    # every, without a length: no last step
    assert [s for s in range(25) if Schedule.every(10).due(s)] == [0, 10, 20]


@pytest.mark.parametrize("sched", [Schedule.log(5), Schedule.even(3), Schedule.of(5)])
def test_a_count_without_the_run_length_is_refused_in_one_line(sched: Schedule) -> None:
    with pytest.raises(ValueError, match=r"^schedule: an int .* needs the run length: pass "
                                         r"steps=, or use Schedule.every\(n\)") as info:
        sched.predicate()
    assert "\n" not in str(info.value)


def _mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def _tracked_steps(tracker: SpectrumTracker, model: torch.nn.Module, calls: int) -> list[int]:
    for _ in range(calls):
        model(torch.randn(16, 6))
        tracker.step()
    steps = sorted(int(s) for s in tracker.table()["step"].unique())
    tracker.close()
    return steps


@pytest.mark.parametrize("count", [4, 9])
def test_the_same_int_gives_the_same_steps_in_a_sim_run_and_a_tracker(count: int) -> None:
    steps = 40
    setting = PowerLawSetting.paper(0.1, 2.0, D=8)
    sim_steps = train_linear(setting, 16, 16, steps, checkpoints=count, progress=False).steps
    model = _mlp()
    tracker = SpectrumTracker(model, schedule=count, steps=steps, activations=False, fit=False,
                              outliers=False, background=False)
    assert _tracked_steps(tracker, model, steps + 1) == [int(s) for s in sim_steps]
    assert int(sim_steps[-1]) == steps and len(sim_steps) > 2


def test_a_tracker_int_without_steps_raises_the_one_line() -> None:
    with pytest.raises(ValueError, match=r"^schedule: an int \(Schedule.log\) is a count of "
                                         r"steps over a run and needs the run length"):
        SpectrumTracker(_mlp(), schedule=3)


@pytest.mark.parametrize(("schedule", "expected"), [
    (Schedule.every(4), [0, 4, 8]),
    (Schedule.per_decade(10), [0, 1, 2, 3, 4, 5, 6, 8]),  # the default
    ([1, 7], [1, 7]),
    ({2, 5}, [2, 5]),
    (lambda s: s in (3, 9), [3, 9]),
])
def test_tracker_schedules_without_a_length(schedule: object, expected: list[int]) -> None:
    model = _mlp()
    tracker = SpectrumTracker(model, schedule=schedule, activations=False, fit=False,
                              outliers=False, background=False)
    assert _tracked_steps(tracker, model, 10) == expected


def test_bad_tracker_schedules_name_schedule() -> None:
    for bad in ("sometimes", "log", 0, [], [-1], True):
        with pytest.raises(ValueError, match="^schedule"):
            SpectrumTracker(_mlp(), schedule=bad)
    with pytest.raises(ValueError, match="^steps"):
        SpectrumTracker(_mlp(), schedule=3, steps=-1)


def test_log_count_is_log_spaced() -> None:
    # 0 and count - 1 geometric points from 1 to steps: here one a decade
    got = Schedule.log(6).resolve(10_000)
    assert got.tolist() == [0, 1, 10, 100, 1000, 10_000]
    got = Schedule.log(5).resolve(2 ** 12)
    assert got.tolist() == [0, 1, 16, 256, 4096]


def test_one_import_path() -> None:
    import specdyn
    import specdyn.sim
    import specdyn.sim.protocol
    from specdyn import schedule

    assert specdyn.Schedule is schedule.Schedule and "Schedule" in specdyn.__all__
    for mod in (specdyn.sim, specdyn.sim.protocol, specdyn.measure):
        assert "Schedule" not in mod.__all__ and "ScheduleLike" not in mod.__all__
    assert not hasattr(specdyn.measure, "log_schedule")
