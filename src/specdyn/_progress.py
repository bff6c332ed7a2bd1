"""Progress bars (tqdm), shown only where a run is long enough to want one."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "",
             enabled: bool = True) -> Iterator[T]:
    """Wrap ``items`` in a tqdm bar on stderr when ``enabled``; else return them as they are."""
    if not enabled:
        yield from items
        return
    from tqdm.auto import tqdm

    yield from tqdm(items, total=total, desc=desc, leave=False, mininterval=0.5)
