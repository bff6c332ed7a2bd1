"""Argument parsing helpers shared by subcommands: number lists and log ranges."""

from __future__ import annotations

import argparse

import numpy as np


def number_list(text: str) -> np.ndarray:
    """Parse ``"1,2,5"``, ``"log:1:1e4:50"`` (log-spaced) or ``"lin:0:1:11"``; ``inf`` allowed."""
    text = text.strip()
    try:
        if text.startswith(("log:", "lin:")):
            kind, lo, hi, n = text.split(":")
            num = int(n)
            if num < 1:
                raise ValueError
            if kind == "log":
                return np.logspace(np.log10(float(lo)), np.log10(float(hi)), num)
            return np.linspace(float(lo), float(hi), num)
        return np.array([float(x) for x in text.split(",") if x.strip()], dtype=np.float64)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a comma list (1,2,5) or a range log:LO:HI:N / lin:LO:HI:N, got {text!r}"
        ) from None
