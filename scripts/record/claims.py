"""Claims as data: every qualitative sentence on the page that rests on numbers ("p99 leaves the target while the
mean stays inside", "P/D wins under a tight TPOT") is a named claim over provenance records, checked when the data
is built and again by `make audit`. A claim that no longer holds stops the build with one line naming the claim,
the numbers it read and the input field to change.

A claim: {"id", "says" (the sentence, in the page's words), "all": [[lhs, op, rhs], ...], "fix": field}, where
lhs and rhs are record ids or plain numbers and op is one of < <= > >= == !=. It holds when every comparison does."""
from __future__ import annotations

import operator

from scripts.record.inputs import InputError

OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne}


def _value(term, records: dict) -> float:
    if isinstance(term, (int, float)) and not isinstance(term, bool):
        return float(term)
    if term not in records:
        raise KeyError(term)
    return float(records[term]["value"])


def evaluate(claim: dict, records: dict) -> tuple[bool, dict[str, float]]:
    """(holds, the numbers it read by record id)."""
    used, holds = {}, True
    for lhs, op, rhs in claim["all"]:
        a, b = _value(lhs, records), _value(rhs, records)
        used.update({t: v for t, v in ((lhs, a), (rhs, b)) if isinstance(t, str)})
        holds = holds and OPS[op](a, b)
    return holds, used


def failures(claims: list[dict], records: dict) -> list[str]:
    """One line per claim that does not hold (or reads a record that does not exist)."""
    problems = []
    for claim in claims:
        try:
            holds, used = evaluate(claim, records)
        except KeyError as missing:
            problems.append(f"claim {claim['id']}: reads record {missing.args[0]!r}, which does not exist")
            continue
        if not holds:
            numbers = ", ".join(f"{rid} = {records[rid]['display']}" for rid in used)
            conds = " and ".join(f"{lhs} {op} {rhs}" for lhs, op, rhs in claim["all"])
            problems.append(f"claim {claim['id']} ({claim['says']}) is false: needs {conds}; has {numbers}; "
                            f"change {claim['fix']}")
    return problems


def check(claims: list[dict], records: dict) -> list[dict]:
    """The claims with the numbers they used, or InputError naming the first false one."""
    problems = failures(claims, records)
    if problems:
        raise InputError(problems[0])
    return [{**c, "numbers": evaluate(c, records)[1]} for c in claims]
