#!/usr/bin/env python3
"""Fits the rational approximation of tanh used by the math prelude's ke_tanh.

tanh(x) ~= x * P(t) / Q(t), t = x^2, P and Q of degree 4, Q(0) = 1, for |x| <= 9
(1 - tanh(9) = 3e-8 < 2^-25, so tanh rounds to +-1.0f beyond; larger |x| are clamped).
No exp and one division, against an expm1 and a division in the exp-based spelling.

Method: the same weighted linearized least squares with Lawson's reweighting as
scripts/fit_erf_rational.py (whose `fit` this calls), reference Python's
double-precision math.tanh. Prints the coefficients, the double-precision relative
error, and the float32 evaluation's largest relative error against np.tanh on a grid
of [-10, 10] plus |x| down to 1e-8.

Usage: .venv/bin/python scripts/fit_tanh_rational.py
"""
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_erf_rational import fit, float32_erf  # noqa: E402

XMAX = 9.0


def main():
    p, q, rel = fit(4, 4, iterations=100, func=math.tanh, xmax=XMAX)
    print(f"double-precision relative error of tanh(x)/x on (0, {XMAX}]: {rel:.3g}")
    print("P:", ", ".join(f"{v:.17g}" for v in p))
    print("Q:", ", ".join(f"{v:.17g}" for v in q))
    small = np.logspace(-8, 1, 20000)
    xs = np.concatenate([np.linspace(-10, 10, 400001), small, -small]).astype(np.float32)
    xs = xs[xs != 0]
    y = float32_erf(xs, p, q, xmax=XMAX)
    ref = np.tanh(xs.astype(np.float64))
    print(f"float32 evaluation: max relative error {np.max(np.abs(y - ref) / np.abs(ref)):.3g}")


if __name__ == "__main__":
    main()
