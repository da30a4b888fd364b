"""A progress bar on stderr for large inputs (tqdm), silent for small ones."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from tqdm import tqdm

from lessons.ingest.passes import Progress
from lessons.ingest.reading import Source

LARGE_INPUT_BYTES = 5 * 1024 * 1024
_PHASES = ("validate", "lessons", "references")


@contextlib.contextmanager
def progress_bar(sources: list[Source], *, stream) -> Iterator[Progress | None]:
    """Yield a progress callback showing bytes read across the three ingest passes, or None when small."""
    total = sum(s.size or 0 for s in sources)
    # A bar only helps a person watching a terminal; in logs and CI it would be noise.
    if total < LARGE_INPUT_BYTES or not getattr(stream, "isatty", lambda: False)():
        yield None
        return
    bar = tqdm(
        total=total * len(_PHASES),
        unit="B",
        unit_scale=True,
        file=stream,
        desc="ingest",
        leave=False,
        mininterval=0.5,
    )
    state = {"phase": None, "base": 0, "last": 0}

    def update(phase: str, done: int) -> None:
        if phase != state["phase"]:
            state["base"] += state["last"] if state["phase"] else 0
            state["phase"], state["last"] = phase, 0
        if done < state["last"]:  # a new source within the same pass
            state["base"] += state["last"]
        state["last"] = done
        bar.n = min(bar.total, state["base"] + done)
        bar.set_description(f"ingest ({phase})")
        bar.refresh()

    try:
        yield update
    finally:
        bar.close()
