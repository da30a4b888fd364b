"""A scripted areev ``llm_cmd`` model for the engine tests: no network, the same answer every time.

areev 1.13.2 runs the command once per call (argv split on whitespace, no shell), writes one JSON
request on stdin and reads one JSON object from stdout. Answers:

- ``probe``: ``{"model": "scripted-consolidator"}`` (becomes the recommendation's ``origin.model``);
- ``discover``: for each ``loop.lesson_pile/1`` finding, one consolidation of every member the
  finding's summary names (by 8-hex prefix) into ``SCRIPTED_LESSON``, citing them by full hash;
- ``ground``: every claim supported; ``verify``: keep, confidence 0.88 (the engine's floor is 0.75);
- ``enrich``: no notes.
"""

import json
import os
import re
import sys

LESSON = "Fill Advertiser with the sponsor on the order; write flight dates as YYYY-MM-DD; write Gross Amount bare."


def members(finding: dict, evidence: list[dict]) -> list[str]:
    prefixes = re.findall(r"\b([0-9a-f]{8})\u2026", finding.get("summary", ""))
    found = [e["hash"] for p in prefixes for e in evidence if e["hash"].startswith(p)]
    return list(dict.fromkeys(found))


def answer(request: dict) -> dict:
    op = request.get("op")
    if op == "probe":
        return {"model": "scripted-consolidator"}
    if op == "discover":
        recs = []
        for finding in request.get("findings", []):
            hashes = members(finding, request.get("evidence", []))
            if finding.get("analyzer") == "loop.lesson_pile/1" and hashes:
                lesson = os.environ.get("SCRIPTED_LESSON", LESSON)
                recs.append(
                    {
                        "summary": "Consolidate the lessons on this entity into one rule",
                        "target": finding["target"],
                        "guidance": "The pile restates a few facts several times.",
                        "evidence": hashes,
                        "confidence": 0.9,
                        "proposal": {"kind": "consolidation", "lesson": lesson, "supersedes": hashes},
                    }
                )
        return {"recommendations": recs}
    if op == "ground":
        return {
            "results": [
                {"id": c["id"], "supported": True, "reason": "restates cited lessons"}
                for c in request.get("claims", [])
            ]
        }
    if op == "verify":
        return {
            "results": [
                {"id": f["id"], "keep": True, "confidence": 0.88, "reason": "sound"}
                for f in request.get("findings", [])
            ]
        }
    return {"notes": []}


if __name__ == "__main__":
    sys.stdout.write(json.dumps(answer(json.loads(sys.stdin.read()))))
