"""Claims an experiment makes about its own output, checked on that output.

Every experiment returns, beside its data, a list of :class:`Claim`: what the
paper (or the related work, or the project itself) says should be seen, where
it says so, the number measured on this run, and whether it held.
``specdyn reproduce`` prints them; ``record.json`` stores them; tests assert
them on the data, never on pixels.

A claim is a prediction written down before the run. Its source, its
tolerance (a constant of the experiment module, never computed from the
measured data) and its direction are fixed in code. Where the project
disagrees with a seed paper, the paper's claim stays in the table, NOT HELD,
with its ``disputed`` reason, and the project's own explanation is a separate
claim with ``source="own"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, asdict, dataclass, replace
from typing import Any

import numpy as np

#: The source of a claim the project makes itself (not a seed paper's statement).
OWN = "own"

#: Which way a revision moved a claim (:attr:`Claim.revised_how`).
REVISED_HOW = ("looser", "tighter", "restated")

#: What a claim checks besides agreement (:attr:`Claim.aspect`).
ASPECTS = {
    "size": "a deviation, spread or distance has the size it should (two-sided)",
    "prefactor": "a level, not only a rate",
    "clock": "a time, so that a run or a theory at another speed fails",
    "oracle": "the theory function the figure calls, against an independent evaluation",
}


@dataclass(frozen=True)
class Claim:
    """One checked statement about an experiment's output.

    Parameters
    ----------
    name
        Short identifier, e.g. ``"plateau 3alpha+beta"``.
    expected
        What should be seen, in words a reader can check, e.g. ``"in [3.95, 4.05]"``.
    measured
        The number (or short text) measured on this run's data.
    held
        Whether the measured value meets the expectation. A NaN measurement is
        never held.
    source
        Where the statement comes from: the seed paper's section, equation or
        figure (``"core Sec. 3.3"``, ``"core Eq. (32)"``, ``"abstract 2"``), or
        :data:`OWN` for the project's own statements. Never empty.
    note
        Why it may fail at this size, or what separates theory and simulation.
    full_only
        True when the claim is not expected to hold at the quick size (the
        ``--full`` run of ``benchmarks/full_claims.py`` records whether it
        holds there); a quick run that misses it is reported, never hidden.
    disputed
        The project's one-line reason a claim is not expected to hold at the
        sizes run: a seed claim the project disputes, or one of its own claims
        reported as failing. Fixed in code; a reason written after a run has
        seen the number says so. Empty for claims the project expects to hold.
    revised
        A claim changed after a run had shown its number: ``"<commit>: <old> -> <new>,
        <why>"`` (the commit that changed it, what changed, and why). Empty for a claim
        as first written. A revision is marked, never quietly made.
    partner
        For a claim whose expectation is "no change" (lazy stays at ``alpha``, nothing
        flagged before ``t*``), which a constant or shuffled table may also meet: the
        name of a claim of the same experiment that such a wrong table fails instead
        (the mutation test of ``tests/experiments`` checks that it does). Empty for a
        claim that a wrong table fails itself.
    key
        A stable identifier of the claim, the same across runs and code versions
        (``docs/claims.md`` and the ``--full`` record match claims by it): a name may
        carry a measured size (fig5's ``t`` and ``k``), a key does not. Empty: the name.
    sanity
        True for a check that holds for any input (an identity of the construction,
        ``alpha_eff(t = 0) = alpha``, a count that cannot be negative): it guards the
        code, not the science, so it is printed as a sanity check under the claims and
        never counted as a held claim (:func:`verdict` reads ``sanity``; one that fails
        is ``FAILED``: an identity that fails is a bug).
    rule
        The tolerance as written in code, where ``expected`` carries a number computed from
        the config or the data (``"in [1/sqrt(D), inf]"`` for ``"in [0.0316, inf]"``): what
        stays the same at every size, compared with the ``--full`` record's copy
        (:func:`definition`). Empty: ``expected`` is the rule (it does not depend on the size).
    revised_how
        For a revised claim, which way the revision moved it: ``"looser"`` (a value that
        failed before may hold now), ``"tighter"`` (the reverse) or ``"restated"`` (another
        statistic or reading, neither simply looser nor tighter). Empty when not revised.
    aspect
        What the claim checks besides agreement, one of :data:`ASPECTS`: ``"size"`` (a
        deviation, spread or distance has the size it should: two-sided, so a simulation
        equal to its theory fails), ``"prefactor"`` (a level, not only a rate), ``"clock"``
        (a time: a run or theory at another speed fails), ``"oracle"`` (the theory function
        the figure calls, against an independent evaluation). Empty: none of these.
    """

    name: str
    expected: str
    measured: float | str | None
    held: bool
    _: KW_ONLY
    source: str
    note: str = ""
    full_only: bool = False
    disputed: str = ""
    revised: str = ""
    partner: str = ""
    key: str = ""
    sanity: bool = False
    rule: str = ""
    revised_how: str = ""
    aspect: str = ""

    def __post_init__(self) -> None:
        if not self.key:
            object.__setattr__(self, "key", self.name)
        if not self.source.strip():
            raise ValueError(f"claim {self.name!r}: source must name a seed section, equation "
                             f"or figure, or be {OWN!r}")
        if self.revised_how and (self.revised_how not in REVISED_HOW or not self.revised):
            raise ValueError(f"claim {self.name!r}: revised_how must be one of "
                             f"{', '.join(REVISED_HOW)}, and only on a revised claim")
        if self.aspect and self.aspect not in ASPECTS:
            raise ValueError(f"claim {self.name!r}: aspect must be one of {', '.join(ASPECTS)}")
        m = self.measured
        if isinstance(m, float) and not math.isfinite(m) and self.held:
            raise ValueError(f"claim {self.name!r}: a non-finite measurement cannot be held")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (non-finite measured numbers become ``None``)."""
        d = asdict(self)
        m = d["measured"]
        if isinstance(m, float) and not math.isfinite(m):
            d["measured"] = None
        return d


def mark(claim: Mapping[str, Any], *, full: bool = False) -> str:
    """``held``, or ``NOT HELD`` and why it was not expected to hold, of a claim's record.

    A claim revised after a run (its record has a non-empty ``revised``) ends with
    ``" (revised)"``; records written before the key existed read as not revised.
    ``full``: the record is of a ``--full`` run, where a ``full_only`` claim is
    expected to hold (:func:`verdict`).
    """
    text = {"held": "held", "sanity": "sanity ok", "disputed": "NOT HELD (disputed)",
            "quick size": "NOT HELD (quick size)",
            "FAILED": "FAILED"}[verdict(claim, full=full)]
    return f"{text} (revised)" if claim.get("revised") else text


#: The verdicts of a claim's record: held, a sanity check that passed, or not held and why
#: (see :func:`verdict`).
VERDICTS = ("held", "sanity", "disputed", "quick size", "FAILED")


def is_sanity(claim: Mapping[str, Any] | Claim) -> bool:
    """Whether a claim (or its record) is a sanity check, not a claim (:attr:`Claim.sanity`)."""
    if isinstance(claim, Claim):
        return claim.sanity
    return bool(claim.get("sanity", False))


def claim_key(claim: Mapping[str, Any] | Claim) -> str:
    """The stable key of a claim or its record (:attr:`Claim.key`; the name in records
    written before keys existed)."""
    if isinstance(claim, Claim):
        return claim.key
    return str(claim.get("key") or claim["name"])


def definition(claim: Mapping[str, Any] | Claim) -> dict[str, Any]:
    """What defines a claim, whatever the size it ran at: its tolerance (the ``rule``, else
    ``expected``), whether it is a sanity check and whether it is disputed (not its source's
    wording, its note or its measured value).

    A claim whose definition differs from the ``--full`` record's copy changed after that
    run: it must say so in ``revised`` (``tests/experiments/test_experiments_claims.py``),
    and the record is checked again by the current code (``benchmarks/full_claims.py
    --from``). Records written before ``rule`` existed read ``expected``.
    """
    d = claim.to_dict() if isinstance(claim, Claim) else claim
    return {"tolerance": str(d.get("rule") or d.get("expected") or ""),
            "sanity": bool(d.get("sanity", False)), "disputed": bool(d.get("disputed"))}


def held_count(claims: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """(held, claims) of a run's claim records, sanity checks left out of both."""
    real = [c for c in claims if not c.get("sanity")]
    return sum(bool(c.get("held")) for c in real), len(real)


def verdict_counts(claims: Sequence[Mapping[str, Any]], *, full: bool = False) -> str:
    """A run's claims as a reader should read them: ``"19 held, 4 not held as expected"``,
    with ``", 1 FAILED"`` when a claim expected to hold did not (sanity checks left out).

    Not ``"held 19/23"``: four claims the project expects not to hold (disputed, or not
    shown at the quick size) are not failures, and a fraction reads as if they were.
    """
    real = [c for c in claims if not c.get("sanity")]
    counts = {v: sum(verdict(c, full=full) == v for c in real) for v in VERDICTS}
    text = f"{counts['held']} held"
    expected = counts["disputed"] + counts["quick size"]
    if expected:
        text += f", {expected} not held as expected"
    if counts["FAILED"]:
        text += f", {counts['FAILED']} FAILED"
    return text


def verdict(claim: Mapping[str, Any], *, full: bool = False) -> str:
    """``held``, ``sanity``, ``disputed``, ``quick size`` or ``FAILED``, of a claim's record.

    A sanity check (:attr:`Claim.sanity`) that passed is ``sanity``, never ``held``: it
    is not counted as a held claim; one that failed is ``FAILED``. Not held counts as
    expected when the claim is ``disputed`` or, at the quick size (``full=False``),
    ``full_only``; otherwise it is ``FAILED``: a claim the project expected to hold did
    not (``specdyn reproduce`` then exits 1). At ``--full`` a ``full_only`` claim is
    expected to hold.
    """
    if claim["held"]:
        return "sanity" if claim.get("sanity") else "held"
    if claim.get("sanity"):
        return "FAILED"
    if claim.get("disputed"):
        return "disputed"
    if claim.get("full_only") and not full:
        return "quick size"
    return "FAILED"


def reason(claim: Mapping[str, Any], *, full: bool = False) -> str:
    """Why a claim's record was not held, in one line (empty when held).

    The ``disputed`` text; for ``quick size`` the note saying why the quick size
    cannot show it; for ``FAILED`` that it was expected to hold, with the note.
    """
    v = verdict(claim, full=full)
    note = str(claim.get("note") or "")
    if v in ("held", "sanity"):
        return ""
    if claim.get("sanity"):
        return "FAILED: a sanity check (it holds for any correct run)" + (
            f"; {note}" if note else "")
    if v == "disputed":
        return f"disputed: {claim['disputed']}"
    if v == "quick size":
        return f"quick size: {note or 'not expected to hold at the quick size'}"
    where = " at --full" if full and claim.get("full_only") else ""
    return f"FAILED: expected to hold{where}" + (f"; {note}" if note else "")


def fmt_measured(x: Any) -> str:
    """A claim's measured value as text: 4 significant digits, or why there is no number.

    A record stores a non-finite measurement as ``None`` (:meth:`Claim.to_dict`),
    so both read ``not finite``: the measurement could not be made on the data
    (too few points, a value never reached), which the claim's note explains.
    """
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "not finite"
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def md_cell(text: Any) -> str:
    """``text`` for one cell of a markdown table: ``|`` and ``*`` escaped (a ``t*`` pair
    would start emphasis), on one line."""
    return str(text).replace("|", "\\|").replace("*", "\\*").replace("\n", " ")


def loglog_slope(x: Any, y: Any) -> float:
    """Log-log slope of ``y`` against ``x`` for a claim (:func:`specdyn.measure.loglog_fit`).

    NaN, so that the claim is NOT HELD, where the data cannot be fitted: fewer
    than two points, or a ``y`` that is not finite and positive (a wrong table).
    """
    from specdyn.measure import loglog_fit

    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xa.size < 2 or not (np.all(ya > 0) and np.all(np.isfinite(ya))):
        return float("nan")
    return loglog_fit(xa, ya)[0]


def within(name: str, measured: float, lo: float, hi: float, *, source: str, note: str = "",
           full_only: bool = False, disputed: str = "", revised: str = "",
           partner: str = "", key: str = "", sanity: bool = False, rule: str = "",
           revised_how: str = "", aspect: str = "") -> Claim:
    """A claim that ``measured`` lies in the closed interval ``[lo, hi]``.

    ``lo`` and ``hi`` are the claim's tolerance, fixed before the run (``rule``: how, where
    they are computed from the config or the data, :attr:`Claim.rule`). A NaN
    measurement is NOT HELD, with the reason added to the note.
    """
    m = float(measured)
    finite = math.isfinite(m)
    held = bool(finite and lo <= m <= hi)
    if not finite:
        note = f"measured value is {m} (not held); {note}" if note else \
            f"measured value is {m} (not held)"
    return Claim(name, f"in [{lo:g}, {hi:g}]", m, held, source=source, note=note,
                 full_only=full_only, disputed=disputed, revised=revised, partner=partner,
                 key=key, sanity=sanity, rule=rule, revised_how=revised_how, aspect=aspect)


def sized(name: str, measured: float, predicted: float, factor: float, *, source: str,
          predicted_by: str, note: str = "", full_only: bool = False, disputed: str = "",
          revised: str = "", revised_how: str = "", key: str = "",
          aspect: str = "size") -> Claim:
    """A two-sided claim: ``measured`` (a deviation from theory, a spread over seeds, a
    distance, a level) has the size ``predicted`` within a factor ``factor`` > 1, i.e. lies
    in ``[predicted / factor, predicted * factor]``.

    Where a simulation is compared with its theory, "the deviation is small" is passed by
    a simulation that *is* its theory (zero is small); this claim is failed by it, and by
    fluctuations of the right law at the wrong level. ``predicted`` comes from an
    independent source, named in ``predicted_by`` (the finite-size theory, the spread over
    seeds other than the judged one, a closed form); ``factor`` is fixed before the run and
    says the resolution of that prediction. A non-positive or non-finite ``predicted`` is
    NOT HELD (there is nothing to compare with).
    """
    if not factor > 1:
        raise ValueError(f"claim {name!r}: factor must be > 1, got {factor}")
    p = float(predicted)
    ok = math.isfinite(p) and p > 0
    lo, hi = (p / factor, p * factor) if ok else (math.nan, math.nan)
    text = f"predicted {p:.4g} ({predicted_by}), within a factor {factor:g}"
    c = within(name, measured if ok else math.nan, lo, hi, source=source,
               note=f"{text}; {note}" if note else text, full_only=full_only,
               disputed=disputed, revised=revised, revised_how=revised_how, key=key,
               rule=f"in [predicted / {factor:g}, predicted x {factor:g}]", aspect=aspect)
    if not ok:  # keep the measured number on record though nothing could be compared
        c = replace(c, measured=float(measured))
    return c


def rank_correlation(x: Any, y: Any) -> float:
    """Spearman rank correlation of ``x`` and ``y`` for a claim.

    NaN, so that the claim is NOT HELD, where it means nothing: fewer than three
    points, a constant or non-finite ``x`` or ``y`` (a wrong table).
    """
    import pandas as pd  # ranks by pandas: scipy.stats costs 0.3-0.4 s to import

    xa, ya = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if (xa.size < 3 or xa.size != ya.size or not (np.all(np.isfinite(xa))
                                                  and np.all(np.isfinite(ya)))
            or np.ptp(xa) == 0 or np.ptp(ya) == 0):
        return float("nan")
    # Spearman is Pearson on average ranks: scipy.stats.spearmanr's own arithmetic
    ranks = pd.DataFrame({"x": xa, "y": ya}).rank(method="average").to_numpy().T
    return float(np.corrcoef(ranks)[1, 0])


def learning_order(times: Any, spectra: Any, ranks: Any) -> float:
    """How strictly modes learn from low to high rank: the rank correlation of each rank's
    half-learning time with the rank.

    ``spectra[i, j]`` is the eigenvalue of rank ``ranks[j]`` at ``times[i]`` (time order).
    A rank's half-learning time is the first time its change since ``times[0]`` reaches
    half of its final change; 1 when every rank learns after the one above it. NaN where
    a rank's final change is not positive (it learned nothing) or the data cannot say.
    """
    t = np.asarray(times, dtype=np.float64)
    rho = np.asarray(spectra, dtype=np.float64)
    inc = rho - rho[0]
    final = inc[-1]
    if not np.all(final > 0):
        return float("nan")
    half = np.array([t[np.argmax(inc[:, j] >= 0.5 * final[j])] for j in range(rho.shape[1])])
    return rank_correlation(ranks, half)
