#!/usr/bin/env python3
"""Fits the rational approximation of erf used by the math prelude's ke_erf.

erf(x) ~= x * P(t) / Q(t), t = x^2, P and Q of degree 5, Q(0) = 1, for |x| <= 4
(erf(4) = 1 - 1.5e-8 rounds to 1.0f, so larger |x| are clamped to 4).

Method: linearized least squares on f*Q - P = 0 (f = erf(x)/x, the reference from
Python's double-precision math.erf) over 20,000 points of (0, 4], weighted by 1/f,
with Lawson's iterative reweighting towards the minimax solution (C. L. Lawson,
"Contributions to the theory of linear least maximum approximation", 1961). Prints
the coefficients and the errors of the float32 evaluation (Horner, as in the
prelude) against math.erf on a grid of [-5, 5].

Usage: .venv/bin/python scripts/fit_erf_rational.py
"""
import math

import numpy as np


def fit(deg_p: int, deg_q: int, iterations: int = 40, func=math.erf, xmax: float = 4.0):
    """Fits func(x)/x ~= P(t)/Q(t), t = x^2, Q(0) = 1, on (0, xmax] (func odd, func(x)/x > 0).

    Returns (P's coefficients, Q's coefficients, lowest degree first; the largest relative
    error of the double-precision rational on the fitting grid)."""
    xs = np.linspace(0.0, xmax, 20001)[1:]
    t = xs * xs
    f = np.array([func(x) for x in xs]) / xs
    w = np.ones_like(t)
    for _ in range(iterations):
        a = np.hstack([np.vstack([t**k for k in range(deg_p + 1)]).T,
                       -np.vstack([f * t**k for k in range(1, deg_q + 1)]).T])
        sw = np.sqrt(w) / f
        sol, *_ = np.linalg.lstsq(a * sw[:, None], f * sw, rcond=None)
        p, q = sol[:deg_p + 1], np.concatenate([[1.0], sol[deg_p + 1:]])
        err = np.abs(np.polyval(p[::-1], t) / np.polyval(q[::-1], t) / f - 1)
        w = w * (err / err.max() + 1e-3)
        w /= w.max()
    return p, q, err.max()


def float32_erf(x, p, q, xmax: float = 4.0):
    """c * P(c^2) / Q(c^2) in float32 (Horner), c = x clamped to [-xmax, xmax], result in [-1, 1]."""
    f32 = np.float32
    c = np.clip(x, f32(-xmax), f32(xmax)).astype(f32)
    t = (c * c).astype(f32)
    a, b = f32(p[-1]), f32(q[-1])
    for k in range(len(p) - 2, -1, -1):
        a = (a * t + f32(p[k])).astype(f32)
    for k in range(len(q) - 2, -1, -1):
        b = (b * t + f32(q[k])).astype(f32)
    return np.clip((c * (a / b).astype(f32)).astype(f32), f32(-1), f32(1))


def main():
    p, q, rel = fit(5, 5)
    print(f"double-precision relative error of erf(x)/x on (0, 4]: {rel:.3g}")
    print("P:", ", ".join(f"{v:.17g}" for v in p))
    print("Q:", ", ".join(f"{v:.17g}" for v in q))
    xs = np.linspace(-5, 5, 400001).astype(np.float32)
    y = float32_erf(xs, p, q)
    ref = np.array([math.erf(float(v)) for v in xs])
    print(f"float32 evaluation: max abs error {np.abs(y - ref).max():.3g}")


if __name__ == "__main__":
    main()
