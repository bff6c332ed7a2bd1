"""SpectrumTracker's table and folder: ``rows/step-<step>.parquet`` and ``record.json``.

Table
    Tidy rows ``(step, layer, quantity, rank, value, verdict)``. ``quantity``
    is ``"<kind>_eigenvalue"`` (``rank`` = 1, 2, ... decreasing) or a
    per-layer summary with ``rank = 0``: ``<kind>_<column>`` for each of the
    ``SUMMARY_COLUMNS`` of :func:`~specdyn.measure.summary.summarize_spectrum`
    (the columns of ``analyze``, same names, same values:
    ``exponent``, ``exponent_ci_low``, ``exponent_ci_high``, ``exponent_r2``,
    ``exponent_kmin``, ``exponent_kmax``, ``exponent_amplitude`` (``C`` in
    ``lambda_k = C k^-a``), ``exponent_short_window`` (0 / 1),
    ``density_exponent``, ``mp_sigma2``, ``mp_edge``, ``mp_ks``,
    ``n_outliers``, ``cap_reached`` (0 / 1), ``max_outliers``, ``lambda_max``;
    docs/concepts.md), and ``<kind>_samples`` (activation rows), where
    ``<kind>`` is ``activation`` or ``weight``. ``verdict`` is the layer's
    verdict at that step (``layer_verdict``), repeated on each of its rows. A
    summary that cannot be computed (e.g. a spectrum too short for a fit) is
    left out and counted in ``tracker.skipped``, with the reason. Only measured
    steps have rows: a step the ``"coalesce"`` policy dropped is listed in
    ``record.json``'s ``"coalesced"`` as ``[step, replaced_by]``
    (:func:`read_spectra` leaves out any ``record_coalesced`` marker row).
Files (``out=DIR``)
    ::

        DIR/record.json               settings, layers, status, skipped summaries and records
        DIR/rows/step-<step>.parquet  one file per recorded step (12-digit step)
        DIR/rows/.step-*.tmp          a write a kill interrupted (ignored; removed at next open)

    ``read_spectra(DIR)`` reads the row files; ``record.json`` holds the
    settings, the layer table (name, kind, the rule that made the matrix, its
    shape; activation axes), status, skipped summaries, coalesced steps (and,
    across ranks, the world size and the sharded weights). Every file is
    written through :mod:`specdyn.io`'s atomic writes (a temporary file beside
    it, then one rename), the primitive ``runs.store`` builds its transactions
    on, so a killed run leaves only whole files: a record is there entirely or
    not at all. :func:`specdyn.runs.store.load_tracker` reads a folder through
    :func:`read_spectra` (``measure`` sits below ``runs``, so the folder's one
    home is here and ``runs.store`` delegates to it).
Resuming
    ``state_dict()`` / ``load_state_dict()`` carry the step, so a run resumed
    from a checkpoint continues the same dataset: files of steps at or after the
    resumed step (written by the interrupted run after its checkpoint) are
    removed (:func:`drop_rows_from`), then rewritten as training replays those
    steps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from specdyn.io import read_json, write_json, write_table

__all__ = ["read_spectra", "read_tracker_record"]

COLUMNS = ["step", "layer", "quantity", "rank", "value", "verdict"]
DTYPES = {"step": "int64", "layer": "string", "quantity": "string", "rank": "int64",
          "value": "float64", "verdict": "string"}
RECORD = "record.json"
ROWS = "rows"
Row = tuple[int, str, str, int, float, str]
_MARKER = "record_coalesced"  # a marker row of a coalesced step: not a measurement


def frame(rows: list[Row]) -> pd.DataFrame:
    """The tidy table of ``rows``, with the table's dtypes."""
    return pd.DataFrame(rows, columns=COLUMNS).astype(DTYPES)


def step_of(path: Path) -> int:
    """The step of a ``step-<step>.parquet`` file."""
    return int(path.stem.split("-", 1)[1])


def row_files(out: Path) -> list[Path]:
    """The whole row files of ``out``, in step order."""
    rows = out / ROWS
    return sorted(rows.glob("step-*.parquet")) if rows.is_dir() else []


def read_spectra(out: str | Path) -> pd.DataFrame:
    """Every row a ``SpectrumTracker(..., out=DIR)`` wrote, sorted by step, layer, quantity, rank:
    measured steps only.

    Only whole files are read (a write interrupted by a crash leaves a hidden
    temporary file, which is ignored).
    """
    rows = Path(out) / ROWS
    if not rows.is_dir():
        raise ValueError(f"no tracker rows in {str(out)!r} (expected {str(rows)!r}); was it "
                         "written by SpectrumTracker(model, out=...)?")
    files = row_files(Path(out))
    if not files:
        return frame([])
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    df = df[df["quantity"] != _MARKER].astype(DTYPES)
    return df.sort_values(["step", "layer", "quantity", "rank"], kind="stable",
                          ignore_index=True)


def read_tracker_record(out: str | Path) -> dict[str, Any] | None:
    """``record.json`` of a tracker folder, or ``None`` when there is none."""
    path = Path(out) / RECORD
    return read_json(path) if path.is_file() else None


def open_folder(out: Path, layers: dict[str, Any], overwrite: bool) -> int | None:
    """Prepare ``out`` for a tracker; the last step it already holds, if any.

    Removes leftovers of interrupted writes; with ``overwrite`` the old rows
    too. Refuses a folder holding the rows of a run with other layers.
    """
    if out.exists() and not out.is_dir():
        raise ValueError(f"out={str(out)!r} exists and is not a folder")
    rows = out / ROWS
    if rows.is_dir():
        for tmp in rows.glob(".step-*.tmp"):  # a write that a kill interrupted
            tmp.unlink(missing_ok=True)
    files = row_files(out)
    if files and overwrite:
        for f in files:
            f.unlink()
        files = []
    rec = read_tracker_record(out) if files else None
    if rec is not None and rec.get("layers") is not None and rec["layers"] != layers:
        raise ValueError(f"out={str(out)!r} holds the record of a run with other "
                         "layers; choose a new folder or pass overwrite=True")
    rows.mkdir(parents=True, exist_ok=True)
    return max((step_of(f) for f in files), default=None)


def refuse_mixing(out: Path, existing: int | None, step: int) -> None:
    """Refuse to write step ``step`` into a folder already holding rows up to ``existing``
    (an earlier run's), unless the tracker resumed it."""
    if existing is not None and step <= existing:
        raise ValueError(
            f"out={str(out)!r} already holds rows up to step {existing} of an earlier run: "
            "call tracker.load_state_dict(saved_state) to continue it, pass overwrite=True to "
            "replace it, or choose a new folder")


def write_rows(out: Path, step: int, df: pd.DataFrame) -> Path:
    """Write one record's rows atomically."""
    return write_table(df, out / ROWS / f"step-{step:012d}.parquet")


def write_record(out: Path, record: dict[str, Any]) -> Path:
    """Write ``record.json`` atomically."""
    return write_json(record, out / RECORD)


def drop_rows_from(out: Path, step: int) -> None:
    """Remove the row files of steps at or after ``step`` (a resume replays them)."""
    for f in row_files(out):
        if step_of(f) >= step:
            f.unlink()
