#!/usr/bin/env python3
"""Generates the cached powers of ten used by core/src/json/number.cpp (Grisu2 and the
decimal-to-double approximation).

For every decimal exponent k = -348, -340, ..., 340 (step 8) it prints the 64-bit significand
f of 10^k, normalized (2^63 <= f < 2^64) and rounded to nearest from the exact rational value:
    10^k ~= f * 2^e,   e = floor(k * log2(10)) - 63.
number.cpp does not store e; it recomputes it with integer arithmetic as
    e = floor(k * 1741647 / 2^19) - 63,
and this script checks that the formula gives the exact exponent for every entry.

Usage: python3 tools/gen_pow10_table.py   (paste the output into number.cpp)
"""
from fractions import Fraction

K_MIN, K_MAX, K_STEP = -348, 340, 8


def normalized(k):
    """Returns (f, e) with 10^k ~= f * 2^e, 2^63 <= f < 2^64, f rounded to nearest."""
    x = Fraction(10) ** k
    e = x.numerator.bit_length() - x.denominator.bit_length() - 64
    while x / Fraction(2) ** e >= 2 ** 64:
        e += 1
    while x / Fraction(2) ** e < 2 ** 63:
        e -= 1
    q = x / Fraction(2) ** e
    f = (q.numerator * 2 + q.denominator) // (2 * q.denominator)  # round half up
    assert 2 ** 63 <= f < 2 ** 64, k  # rounding never carries out for these k
    return f, e


def main():
    rows = []
    for k in range(K_MIN, K_MAX + 1, K_STEP):
        f, e = normalized(k)
        assert (k * 1741647) >> 19 == e + 63, k  # Python >> floors, like number.cpp's helper
        rows.append("0x%016XULL" % f)
    print("// %d entries: 10^k for k = %d, %d, ..., %d" % (len(rows), K_MIN, K_MIN + K_STEP, K_MAX))
    for i in range(0, len(rows), 3):
        print("    " + ", ".join(rows[i:i + 3]) + ",")


if __name__ == "__main__":
    main()
