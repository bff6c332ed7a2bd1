"""Run one experiment into its folder as a transaction; check a finished folder again.

:func:`run_experiment` is what ``specdyn reproduce`` and ``specdyn run`` call:
the experiment's tables, figures and JSON record appear in ``out_root/NAME`` all
at once, or not at all. :func:`recheck_claims` computes the claims of a finished
folder again with the current code.
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from pathlib import Path
from typing import Any

from specdyn import io, provenance
from specdyn._cancel import raise_if_cancelled
from specdyn.runs import store
from specdyn.runs.claims import Claim
from specdyn.runs.config import config_from_dict, config_to_dict
from specdyn.runs.registry import ExperimentResult, get


def run_experiment(name: str, out_root: str | Path = "specdyn-out", *, full: bool = False,
                   config: Any = None) -> ExperimentResult:
    """Run one experiment into ``out_root/name`` as a transaction, with its JSON run record.

    The experiment writes into a fresh temporary folder beside
    ``out_root/name``, which replaces the folder in one rename only when the
    run finished (see :mod:`specdyn.runs.store`); the folder is locked
    meanwhile, so a second run into it is refused at once
    (:class:`~specdyn.runs.transaction.FolderBusyError`, naming the holder's
    PID). The record (``record.json``) holds the exact config, the specdyn
    version and commit, the host, the wall time, the summary and the claims.

    A failure leaves the previous finished result untouched: it is recorded
    beside it in ``out_root/name.failed.json`` (status ``failed``, with the
    traceback) and then re-raised.
    """
    exp = get(name)
    cfg = exp.config(full) if config is None else config
    if not isinstance(cfg, exp.config_cls):
        raise ValueError(f"config for {name!r} must be a {exp.config_cls.__name__}")
    target = Path(out_root) / name
    cfg_dict = config_to_dict(cfg)
    seed = cfg_dict.get("seed")
    provenance.git_commit()  # the commit the run starts from (kept: HEAD may move meanwhile)
    with store.transaction(target) as tmp:
        start = time.perf_counter()
        try:
            result = exp.run(cfg, tmp)
            if exp.claims is not None:
                result = dataclasses.replace(result, claims=exp.claims(cfg, tmp))
        except Exception:
            raise_if_cancelled()  # a cancel a library reported as its own error: no failure
            store.record_failure(target, provenance.run_record(
                {"experiment": name, **cfg_dict}, seed=seed,
                wall_time=time.perf_counter() - start, status="failed",
                error=traceback.format_exc()))
            raise
        wall = time.perf_counter() - start
        io.write_json(
            provenance.run_record({"experiment": name, **cfg_dict}, seed=seed, wall_time=wall,
                                  extra={"figures": [p.name for p in result.figures],
                                         "tables": [p.name for p in result.tables],
                                         "summary": result.summary,
                                         "claims": [c.to_dict() for c in result.claims]}),
            tmp / store.RECORD,
        )

    def moved(p: Path) -> Path:
        return target / Path(p).relative_to(tmp) if Path(p).is_relative_to(tmp) else Path(p)

    return dataclasses.replace(result, out_dir=target, figures=[moved(p) for p in result.figures],
                               tables=[moved(p) for p in result.tables])


def recheck_claims(folder: str | Path) -> list[Claim]:
    """The claims of a finished experiment folder, computed again by the current code.

    Reads the experiment's name and config from ``folder/record.json`` and calls
    its registered ``claims`` function on the tables in ``folder``: the claims of
    a long run (a ``--full`` size, say) can be checked by a later version without
    running it again. An experiment without a ``claims`` function, or a folder
    that did not finish, is a ``ValueError``.
    """
    folder = Path(folder)
    rec = io.read_json(folder / store.RECORD)
    if rec.get("status") != "finished":
        raise ValueError(f"{folder}: the run did not finish (status {rec.get('status')!r})")
    data = dict(rec["config"])
    exp = get(data.pop("experiment"))
    if exp.claims is None:
        raise ValueError(f"experiment {exp.name!r} has no claims function to check again")
    cfg: Any = config_from_dict(exp.config_cls, data, source=str(folder / store.RECORD))
    return exp.claims(cfg, folder)
