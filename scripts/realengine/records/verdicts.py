"""What the real-engine sections' sentences turn on, as claims over their records (scripts/record/claims.py: an id,
the sentence from labels.json `claims`, the comparisons between records; settled when measured_records.json is
built, re-checked by the audit): each error figure within its goal (config/real_engine.json comparison.goals), the
worst load cell within its own spread, a closed loop's wave patterns and starts, the repeat's spread and counts.
The templates read each by its id through holds[...]."""
from __future__ import annotations

from scripts.realengine.records.words import HW, WORDS

CLAIMS, GOAL_FIX = WORDS["claims"], "config/real_engine.json comparison.goals"
GOAL_FIGURES = {"central": "central_median_abs_error", "tail": "tail_median_abs_error",
                "attainment": "attainment_max_abs_error"}


def claim_over(prov: dict, cid: str, says: str, comparisons: list[list], fix: str) -> list[dict]:
    """The claim `cid` (scripts/record/claims.py): every [lhs, op, rhs] of `comparisons` (a record id or a number on
    each side), in the words `says`; none when a record it reads is absent (the page says nothing of a figure it
    does not have)."""
    if any(isinstance(t, str) and t not in prov for lhs, _, rhs in comparisons for t in (lhs, rhs)):
        return []
    return [{"id": cid, "says": says, "all": comparisons, "fix": fix}]


def claim(prov: dict, cid: str, says: str, lhs: str, op: str, rhs: str, fix: str = GOAL_FIX) -> list[dict]:
    """claim_over one comparison, record `lhs` op record `rhs`; `says` is a labels.json claims sentence, filled
    with the records' labels (`label`, `other`) and the right-hand record's display and unit (`goal`, `unit`)."""
    if lhs not in prov or rhs not in prov:
        return []
    words = CLAIMS[says].format(label=prov[lhs]["label"], other=prov[rhs]["label"], goal=prov[rhs]["display"],
                                unit=prov[rhs]["unit"])
    return claim_over(prov, cid, words, [[lhs, op, rhs]], fix)


def goal_claims(prov: dict, figures: str, goals: str, which: tuple[str, ...] = tuple(GOAL_FIGURES)) -> list[dict]:
    """`<figures>.meets.<goal>` for each goal in `which`: the error figure `<figures>.<..._error>` is within the
    goal `<goals>.goal.<goal>` (what the page's "met / missed the goal" wording turns on)."""
    return [c for goal in which for c in claim(prov, f"{figures}.meets.{goal}", "within_goal",
                                                 f"{figures}.{GOAL_FIGURES[goal]}", "<=", f"{goals}.goal.{goal}")]


def loop_claims(prov: dict, cell: str, where: str) -> list[dict]:
    """A closed loop's claims: both measured wave patterns appear in the prediction (first prefill of one request
    and of two), and each end of its starts' range begins staggered as measured (one request first)."""
    out = claim_over(prov, f"{cell}.both_patterns_predicted", CLAIMS["both_patterns_predicted"].format(where=where),
                     [[f"{cell}.first1.predicted", ">", 0], [f"{cell}.first2.predicted", ">", 0]],
                     "precomputed/serve-heldout/ (the loop)")
    for end in ("low", "high"):
        out += claim_over(prov, f"{cell}.pattern_{end}.staggered", CLAIMS["start_staggered"].format(
            where=where, which=HW["pattern_which"][end]), [[f"{cell}.pattern_{end}.together", "==", 1]],
            "config/real_engine.json comparison (the starts tried)")
    return out


def held_claims(prov: dict, base: str) -> list[dict]:
    """What the held-out section's sentences turn on, as claims over its records: each summary (noiseless, noisy,
    the repeat's mean) within its goals, the same-day calibration within the central goal, the sessions' own
    attainment spread over the attainment goal, and whether the repeat's summary counts other cells than the
    first session's."""
    out = [c for figures in ("held", "noisy", "rep.mean") for c in goal_claims(prov, f"{base}.{figures}", base)]
    out += goal_claims(prov, f"{base}.hour", base, ("central",))
    out += claim(prov, f"{base}.rep.spread_over_goal", "spread_over_goal", f"{base}.rep.spread.attainment_max", ">",
                 f"{base}.goal.attainment")
    return out + claim(prov, f"{base}.rep.counts_differ", "repeat_counts_differ", f"{base}.rep.below_saturation",
                       "!=", f"{base}.held.below_saturation", "precomputed/serve-heldout/ (the sessions measured)")
