"""``specdyn reproduce``'s default thread count: one at quick sizes, the free cores at --full."""

from __future__ import annotations

import pytest

from specdyn.cli import reproduce


@pytest.mark.parametrize("load", [0.0, 1.0, 7.5])
def test_quick_default_is_one_thread_at_any_load(monkeypatch: pytest.MonkeyPatch,
                                                 load: float) -> None:
    monkeypatch.setattr(reproduce.os, "cpu_count", lambda: 8)
    monkeypatch.setattr(reproduce.os, "getloadavg", lambda: (load, load, load))
    assert reproduce.default_threads() == 1
    assert reproduce.default_threads(full=False) == 1


@pytest.mark.parametrize(("load", "want"), [(0.0, 8), (2.4, 6), (7.6, 1), (30.0, 1)])
def test_full_default_takes_the_cores_the_load_leaves(monkeypatch: pytest.MonkeyPatch,
                                                      load: float, want: int) -> None:
    monkeypatch.setattr(reproduce.os, "cpu_count", lambda: 8)
    monkeypatch.setattr(reproduce.os, "getloadavg", lambda: (load, load, load))
    assert reproduce.default_threads(full=True) == want
