#!/usr/bin/env python3
"""NumPy reference for bench/toys_relu: seed 004's relu toy (f(x) = W2 relu(W1 x + b1) + b2, d = m = 1)
trained by full-batch plain GD on MSE + lambda*G with the analytic gradient, float64 — the paper's
own stack ("double precision (NumPy default)"), written the vectorised way a NumPy user would.

Same protocol as `gaugelab toy relu` (toys/README.md): x ~ U[-2, 2], y = sin(2.5x) + 0.2cos(6x) +
0.1x + sigma*N(0, 1), every parameter N(0, init_scale^2), G = mean_i (log(|w1_i| + eps) -
log(|w2_i| + eps))^2 (eq. 9) with gradient (A11)-(A12). Prints `steps_per_s X` and the final loss.
Run with /usr/bin/python3 (Debian numpy).
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def target(x: np.ndarray) -> np.ndarray:
    return np.sin(2.5 * x) + 0.2 * np.cos(6.0 * x) + 0.1 * x


def make_problem(n: int, hidden: int, sigma: float, init_scale: float, seed: int):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, n)                      # [N]
    y = target(x) + sigma * rng.standard_normal(n)     # [N]
    w1, b1, w2 = (init_scale * rng.standard_normal(hidden) for _ in range(3))  # [H] each
    b2 = init_scale * rng.standard_normal()
    return x, y, [w1, b1, w2, b2]


def step(x, y, p, lr: float, lam: float, eps: float) -> float:
    """One GD step in place on p = [w1, b1, w2, b2]; returns the total loss before it."""
    w1, b1, w2, b2 = p
    n, h = x.shape[0], w1.shape[0]
    z = np.outer(x, w1) + b1                 # [N, H]
    a = np.maximum(z, 0.0)                   # [N, H]
    r = a @ w2 + b2 - y                      # [N]
    loss = float(r @ r) / n
    g = (2.0 / n) * r                        # [N]
    back = np.outer(g, w2) * (z > 0)         # [N, H]
    gw1, gb1, gw2, gb2 = back.T @ x, back.sum(0), a.T @ g, g.sum()
    if lam > 0:
        n1, n2 = np.abs(w1), np.abs(w2)
        v = np.log(n1 + eps) - np.log(n2 + eps)
        loss += lam * float(v @ v) / h
        c = lam * 2.0 / h
        gw1 = gw1 + c * v * w1 / (n1 * (n1 + eps))
        gw2 = gw2 - c * v * w2 / (n2 * (n2 + eps))
    w1 -= lr * gw1
    b1 -= lr * gb1
    w2 -= lr * gw2
    p[3] = b2 - lr * gb2
    return loss


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-train", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=20)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--lambda", dest="lam", type=float, default=0.0)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--noise-std", type=float, default=0.1)
    ap.add_argument("--init-scale", type=float, default=0.1)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    x, y, p = make_problem(a.n_train, a.hidden, a.noise_std, a.init_scale, a.seed)
    for _ in range(50):  # warm-up (first-call overheads)
        step(x, y, p, a.lr, a.lam, a.eps)
    t0 = time.perf_counter()
    for _ in range(a.steps):
        loss = step(x, y, p, a.lr, a.lam, a.eps)
    dt = time.perf_counter() - t0
    print(f"steps_per_s {a.steps / dt:.1f}")
    print(f"final_loss {loss:.6g}")


if __name__ == "__main__":
    main()
