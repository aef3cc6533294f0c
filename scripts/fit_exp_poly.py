#!/usr/bin/env python3
"""Fits the polynomial of e^r used by the math prelude's ke_exp.

e^r ~= 1 + r + c2 r^2 + ... + c6 r^6 on |r| <= ln2/2 (the reduced argument after
x = n ln2 + r), with the first two coefficients fixed to 1 so that the result is
exact to first order near r = 0.

Method: least squares on the relative error (e^r - 1 - r)/e^r - sum c_k r^k / e^r
over 20,001 points, with Lawson's iterative reweighting towards the minimax solution
(C. L. Lawson, "Contributions to the theory of linear least maximum approximation",
1961). Prints the coefficients, the double-precision relative error, and the error of
the float32 evaluation (range reduction and Horner as in the prelude) against
double-precision math.exp on a grid of [-87, 88], in units of float32 ulp.

Usage: .venv/bin/python scripts/fit_exp_poly.py
"""
import math

import numpy as np

LN2_HI = 0.693359375  # Cody & Waite's split of ln 2: exact in 9 bits
LN2_LO = -2.12194440e-4


def lawson(a, b, iterations: int):
    """Least squares a c ~= b with Lawson's reweighting towards the minimax solution.

    Returns (c, the largest |a c - b| of the last iteration)."""
    w = np.ones(len(b))
    for _ in range(iterations):
        sw = np.sqrt(w)
        c, *_ = np.linalg.lstsq(a * sw[:, None], b * sw, rcond=None)
        err = np.abs(a @ c - b)
        w = w * (err / err.max() + 1e-3)
        w /= w.max()
    return c, err.max()


def fit(degree: int = 6, iterations: int = 60):
    half = math.log(2) / 2
    r = np.linspace(-half, half, 20001)
    e = np.exp(r)
    a = np.vstack([r**k / e for k in range(2, degree + 1)]).T
    return lawson(a, (e - 1 - r) / e, iterations)


def float32_exp(x, c):
    f32 = np.float32
    x = x.astype(f32)
    t = (x * f32(1.44269504088896341) + f32(12582912.0)).astype(f32)
    n = (t - f32(12582912.0)).astype(f32)
    r = ((x - n * f32(LN2_HI)).astype(f32) - n * f32(LN2_LO)).astype(f32)
    p = f32(c[-1])
    for k in range(len(c) - 2, -1, -1):
        p = (p * r + f32(c[k])).astype(f32)
    p = (p * r + f32(1.0)).astype(f32)
    p = (p * r + f32(1.0)).astype(f32)
    return (p.astype(np.float64) * np.exp2(n.astype(np.float64))).astype(f32)


def main():
    c, rel = fit()
    print(f"double-precision relative error on |r| <= ln2/2: {rel:.3g}")
    print("c2..c6:", ", ".join(f"{v:.9g}" for v in c))
    xs = np.linspace(-87.0, 88.0, 2000001).astype(np.float32)
    y = float32_exp(xs, c).astype(np.float64)
    ref = np.exp(xs.astype(np.float64))
    ulp = np.spacing(ref.astype(np.float32)).astype(np.float64)
    print(f"float32 evaluation on [-87, 88]: max error {np.max(np.abs(y - ref) / ulp):.3g} ulp, "
          f"max relative error {np.max(np.abs(y - ref) / ref):.3g}")


if __name__ == "__main__":
    main()
