"""Claims as data: every qualitative sentence on the page that rests on numbers ("p99 leaves the target while the
mean stays inside", "P/D wins under a tight TPOT") is a named claim over provenance records, checked when the data
is built and again by `make audit`. A claim that no longer holds stops the build with one line naming the claim,
the numbers it read and the input field to change.

A claim: {"id", "says" (the sentence, in the page's words), "all": [[lhs, op, rhs], ...], "fix": field}, where
lhs and rhs are record ids, [record id, factor] or plain numbers and op is one of < <= > >= == !=. It holds when
every comparison does. "At most" and "at least" (<=, >=) hold up to ROUNDING of the bound: a figure made of ratios
of counts lands a few units of the last place past a bound it meets exactly (7/120 - 1/120 is 0.05000000000000001),
and the page says "within the goal" of it."""
from __future__ import annotations

import operator

from scripts.record.inputs import InputError

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}
ROUNDING = 1e-9  # relative to the bound (at least 1): doubles' noise, far below any figure's shown precision


def compare(a: float, op: str, b: float) -> bool:
    """`a op b`, with <= and >= holding up to ROUNDING of b."""
    slack = ROUNDING * max(1.0, abs(b))
    if op == "<=":
        return a <= b + slack
    if op == ">=":
        return a >= b - slack
    return OPS[op](a, b)


def _value(term, records: dict) -> float:
    if isinstance(term, (int, float)) and not isinstance(term, bool):
        return float(term)
    if isinstance(term, list):  # [record id, factor]: compare across units (s and ms)
        return _value(term[0], records) * term[1]
    if term not in records:
        raise KeyError(term)
    return float(records[term]["value"])


def evaluate(claim: dict, records: dict) -> tuple[bool, dict[str, float]]:
    """(holds, the numbers it read by record id)."""
    used, holds = {}, True
    for lhs, op, rhs in claim["all"]:
        a, b = _value(lhs, records), _value(rhs, records)
        for t in (lhs, rhs):
            rid = t[0] if isinstance(t, list) else t
            if isinstance(rid, str):
                used[rid] = float(records[rid]["value"])
        holds = holds and compare(a, op, b)
    return holds, used


def _name(term) -> str:
    return f"{term[0]} × {term[1]:g}" if isinstance(term, list) else str(term)


def failures(claims: list[dict], records: dict) -> list[str]:
    """One line per claim that does not hold (or reads a record that does not exist). A claim recorded with
    "holds": false is one the page words the other way: it fails when it has come to hold."""
    problems = []
    for claim in claims:
        try:
            holds, used = evaluate(claim, records)
        except KeyError as missing:
            problems.append(f"claim {claim['id']}: reads record {missing.args[0]!r}, which does not exist")
            continue
        if claim.get("holds") is False and holds:
            problems.append(f"claim {claim['id']} ({claim['says']}) now holds, but the page was worded for it "
                            f"not holding: rebuild")
        elif claim.get("holds", True) and not holds:
            numbers = ", ".join(f"{rid} = {records[rid]['display']}" for rid in used)
            conds = " and ".join(f"{_name(lhs)} {op} {_name(rhs)}" for lhs, op, rhs in claim["all"])
            problems.append(f"claim {claim['id']} ({claim['says']}) is false: needs {conds}; has {numbers}; "
                            f"change {claim['fix']}")
    return problems


def check(claims: list[dict], records: dict) -> list[dict]:
    """The claims with the numbers they used, or InputError naming the first false one."""
    problems = failures(claims, records)
    if problems:
        raise InputError(problems[0])
    return [{**c, "numbers": evaluate(c, records)[1]} for c in claims]


def settle(claims: list[dict], records: dict) -> list[dict]:
    """The claims with whether each holds and the numbers it read, for a page that words each sentence by the
    outcome (no claim stops the build; the audit re-checks each outcome)."""
    out = []
    for c in claims:
        holds, used = evaluate(c, records)
        out.append({**c, "holds": holds, "numbers": used})
    return out
