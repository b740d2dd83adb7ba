"""Display rounding shared by the page, the audit and the tests (the page's JS mirrors `format_number`)."""
from __future__ import annotations

import math

DECIMALS = {"int": 0, "f1": 1, "f2": 2, "f3": 3}


def round_half_up(value: float, decimals: int) -> float:
    scale = 10 ** decimals
    return math.floor(value * scale + 0.5) / scale


def format_number(value: float, fmt: str) -> str:
    """'int' -> 2,304 ; 'f1' -> 15.5 ; 'f2' -> 1.91 (thousands separators throughout)."""
    if fmt not in DECIMALS:
        raise ValueError(f"unknown display format {fmt!r}")
    if not math.isfinite(value):
        raise ValueError(f"cannot display {value!r}")
    decimals = DECIMALS[fmt]
    return f"{round_half_up(value, decimals):,.{decimals}f}"


def exact_format(value: float) -> str:
    """The shortest format that shows `value` as it is (0.5 -> 'f1', 0.125 -> 'f3'), 'f3' if none does: for settings
    such as a sending rate, where a rounded display would name a rate that was never sent."""
    for fmt, decimals in DECIMALS.items():
        if math.isclose(round_half_up(value, decimals), value, rel_tol=0, abs_tol=1e-9):
            return fmt
    return "f3"


def chinese_number(n: int) -> str:
    """1..99 in Chinese numerals (第九次, 第十次, 第十一次, 第二十次), others in digits: the page counts measurement
    sessions in words, and a tenth session must not end the render."""
    digits = "一二三四五六七八九"
    n = int(n)
    if not 1 <= n <= 99:
        return str(n)
    tens, ones = divmod(n, 10)
    head = "" if tens == 0 else "十" if tens == 1 else digits[tens - 1] + "十"
    return head + (digits[ones - 1] if ones else "")
