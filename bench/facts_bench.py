"""The cost of grouping one pile into facts (``lessons.core.facts.pile_facts``), by pile size.

Usage:
    .venv/bin/python bench/facts_bench.py [--sizes 10,50,200,1000] [--repeat 3]

For each size, a pile of generated lesson texts in ``bench/generate.py``'s shape is grouped three ways,
each the median of ``--repeat`` runs: the old word rules (``lessons.core.groups.restatement_groups``)
for scale; the facts with no embedding cached (every member's text encoded by the sentence model, as
when a pile's lessons are new); the facts again (embeddings cached in the process, as when a pile
changes by a member or a mark). Prints milliseconds. The model's load is timed once, first.
Never run by the test suite. docs/benchmarks.md, "Facts (issue 22)".
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.generate import WORDS  # noqa: E402
from lessons.core import embedding  # noqa: E402
from lessons.core.facts import pile_facts  # noqa: E402
from lessons.core.groups import restatement_groups  # noqa: E402
from lessons.core.piles import PileMember  # noqa: E402


def pile(size: int, seed: int) -> tuple[list[PileMember], dict[str, str]]:
    """``size`` live members with texts as ``bench/generate.py`` writes them, unique to ``seed``."""
    rng = random.Random(seed)
    members, texts = [], {}
    for n in range(size):
        words = rng.sample(WORDS, 6)
        text = f"When {words[0]} {words[1]} meets {words[2]}, check {' '.join(words[3:])} (rule {seed}-{n})."
        digest = f"{seed:08x}{n:056x}"
        members.append(PileMember(hash=digest, created_at_ms=n, status="live", verdict=None))
        texts[digest] = text
    return members, texts


def _ms(call) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,50,200,1000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"model load: {_ms(embedding._model):.0f} ms")
    print(f"{'members':>8} {'word rules':>11} {'facts, new texts':>17} {'facts again':>12}  (ms, medians)")
    seed = 0
    for size in (int(s) for s in args.sizes.split(",")):
        rules, cold, warm = [], [], []
        for _ in range(args.repeat):
            seed += 1
            members, texts = pile(size, seed)
            rules.append(_ms(lambda m=members, t=texts: restatement_groups(members=m, texts=t)))
            cold.append(_ms(lambda m=members, t=texts: pile_facts(members=m, texts=t)))
            warm.append(_ms(lambda m=members, t=texts: pile_facts(members=m, texts=t)))
        med = statistics.median
        print(f"{size:>8} {med(rules):>11.1f} {med(cold):>17.1f} {med(warm):>12.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
