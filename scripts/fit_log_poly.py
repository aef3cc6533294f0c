#!/usr/bin/env python3
"""Fits the polynomial of log(1 + f) used by the math prelude's ke_log.

After the split x = 2^e * m, m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact) lies in
[-0.2929, 0.4142] and log(m) = log1p(f) ~= f - f^2/2 + f^3 * P(f), P of degree 6. The
first two terms are fixed so that the result is exact to second order near f = 0 (no
relative error grows as x -> 1). Division-free, against the (m - 1) / (m + 1) of the
atanh series it replaces (one divide per element: the slow part on AVX-512).

Method: least squares on the relative error of log1p(f) over 40,001 points with Lawson's
iterative reweighting towards the minimax solution (C. L. Lawson, "Contributions to the
theory of linear least maximum approximation", 1961), as scripts/fit_exp_poly.py does
for e^r. Prints the coefficients, the double-precision relative error, and the float32
evaluation's (split, Horner and Cody-Waite e * ln2 as in the prelude) largest relative
error against double-precision log over 1e-37..1e38 and [0.5, 2].

With --split p75_1p5 it fits the AVX-512 variant ke_log_v16 instead: there the split
comes from vgetmantps with the interval [0.75, 1.5) (Intel SDM, VGETMANTPS), so
f = m - 1 lies in [-0.25, 0.5).

Usage: .venv/bin/python scripts/fit_log_poly.py [--split sqrt2|p75_1p5]
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_exp_poly import LN2_HI, LN2_LO, lawson  # noqa: E402


# Mantissa interval [low, high) of each split.
SPLITS = {"sqrt2": (math.sqrt(0.5), math.sqrt(2)), "p75_1p5": (0.75, 1.5)}


def fit(split: str = "sqrt2", degree: int = 6, iterations: int = 80):
    low, high = SPLITS[split]
    f = np.linspace(low - 1, high - 1, 40001)
    f = f[np.abs(f) > 1e-6]
    log1p = np.log1p(f)
    a = np.vstack([f**(k + 3) / log1p for k in range(degree + 1)]).T
    return lawson(a, (log1p - f + f * f / 2) / log1p, iterations)


def float32_log(x, c, split="sqrt2"):
    f32 = np.float32
    m, e = np.frexp(x.astype(np.float64))  # exact: m in [0.5, 1)
    m = (2 * m).astype(f32)
    e = e - 1
    high = m >= f32(SPLITS[split][1])
    m = np.where(high, m * f32(0.5), m).astype(f32)
    e = np.where(high, e + 1, e).astype(f32)
    f = (m - f32(1)).astype(f32)
    p = f32(c[-1])
    for k in range(len(c) - 2, -1, -1):
        p = (p * f + f32(c[k])).astype(f32)
    r = (p * f + f32(-0.5)).astype(f32)
    y = ((f * f).astype(f32) * r + f).astype(f32)
    return (e * f32(LN2_HI) + (e * f32(LN2_LO) + y)).astype(f32)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=sorted(SPLITS), default="sqrt2",
                        help="mantissa interval: sqrt2 = [sqrt(1/2), sqrt(2)) (ke_log), "
                             "p75_1p5 = [0.75, 1.5) (ke_log_v16, vgetmantps)")
    split = parser.parse_args().split
    c, rel = fit(split)
    print(f"double-precision relative error of log1p(f): {rel:.3g}")
    print("P:", ", ".join(f"{v:.17g}" for v in c))
    xs = np.concatenate([np.logspace(-37, 38, 300001), np.linspace(0.5, 2, 200001)])
    xs = xs.astype(np.float32)
    xs = xs[xs != 1]
    ref = np.log(xs.astype(np.float64))
    y = float32_log(xs, c, split)
    print(f"float32 evaluation: max relative error {np.max(np.abs(y - ref) / np.abs(ref)):.3g}")


if __name__ == "__main__":
    main()
