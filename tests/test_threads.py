"""specdyn._threads.limit_threads: the one thread-pool policy of reproduce and sweep workers."""

from __future__ import annotations

import os

import pytest
import threadpoolctl

from specdyn._threads import THREAD_ENV, limit_threads


@pytest.mark.parametrize("wait_policy", [None, "ACTIVE"])
def test_limit_threads_overrides_the_environment_and_resizes_the_loaded_pools(
        monkeypatch: pytest.MonkeyPatch, wait_policy: str | None) -> None:
    torch = pytest.importorskip("torch")
    for var in THREAD_ENV:
        monkeypatch.setenv(var, "7")  # a user's setting: the caller's n wins over it
    if wait_policy is None:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    else:
        monkeypatch.setenv("OMP_WAIT_POLICY", wait_policy)
    before = torch.get_num_threads()
    with threadpoolctl.threadpool_limits(None):  # puts the BLAS pools back on exit
        try:
            limit_threads(1)
            assert {os.environ[var] for var in THREAD_ENV} == {"1"}
            assert os.environ["OMP_WAIT_POLICY"] == (wait_policy or "PASSIVE")
            assert torch.get_num_threads() == 1
            blas = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
            assert blas and all(p["num_threads"] == 1 for p in blas)
        finally:
            torch.set_num_threads(before)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2"])
def test_limit_threads_names_a_bad_count_before_changing_anything(
        monkeypatch: pytest.MonkeyPatch, bad: object) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    with pytest.raises(ValueError, match="threads"):
        limit_threads(bad)  # type: ignore[arg-type]
    assert os.environ["OMP_NUM_THREADS"] == "7"
