"""The Verify-gate verdict words the product knows (docs/interchange.md, "verdict"): one home for them.

Hosts may send other words; a page shows those neutral grey. The queue counts three of them apart, the
verdict mix (held, regressed, drifted); every other live lesson is "other" or "not applied".
"""

from __future__ import annotations

HELD = "held"
REGRESSED = "regressed"
DRIFTED = "drifted"
HELD_COSTLIER = "held_costlier"
UNMEASURED = "unmeasured"
KNOWN = (HELD, REGRESSED, DRIFTED, HELD_COSTLIER, UNMEASURED)
# The queue's mix columns and the coverage matrix's coloured members, in this order.
VERDICT_MIX = (HELD, REGRESSED, DRIFTED)
