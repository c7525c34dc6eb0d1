#!/usr/bin/env python3
"""JAX peer for bench/relu_peers.sh: the same relu toy protocol as relu_gd.py (seed 004, float64, full-batch GD
on MSE + lambda*G with the analytic gradient), written the way a JAX user would: one jax.jit of a lax.scan over
the steps, jax.vmap over seeds. Prints `seed_steps_per_s X` (excluding compilation), `compile_s`, and the final
loss of seed 0. Needs the `jax` CPU wheel (scripts/install-deps.sh with GAUGELAB_BENCH_PEERS=1 puts it in a
separate venv); one thread (XLA's CPU client pinned by the caller's taskset and the flags below).
"""
from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)


def target(x):
    return np.sin(2.5 * x) + 0.2 * np.cos(6.0 * x) + 0.1 * x


def problem(n: int, hidden: int, sigma: float, init_scale: float, seed: int):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, n)
    y = target(x) + sigma * rng.standard_normal(n)
    w1, b1, w2 = (init_scale * rng.standard_normal(hidden) for _ in range(3))
    return x, y, (w1, b1, w2, np.array(init_scale * rng.standard_normal()))


def make_run(x, y, lr: float, lam: float, eps: float, steps: int):
    n = x.shape[0]

    def step(p, _):
        w1, b1, w2, b2 = p
        h = w1.shape[0]
        z = jnp.outer(x, w1) + b1                # [N, H]
        a = jnp.maximum(z, 0.0)
        r = a @ w2 + b2 - y                      # [N]
        loss = r @ r / n
        g = (2.0 / n) * r
        back = jnp.outer(g, w2) * (z > 0)
        gw1, gb1, gw2, gb2 = back.T @ x, back.sum(0), a.T @ g, g.sum()
        if lam > 0:
            n1, n2 = jnp.abs(w1), jnp.abs(w2)
            v = jnp.log(n1 + eps) - jnp.log(n2 + eps)
            loss = loss + lam * (v @ v) / h
            c = lam * 2.0 / h
            gw1 = gw1 + c * v * w1 / (n1 * (n1 + eps))
            gw2 = gw2 - c * v * w2 / (n2 * (n2 + eps))
        return (w1 - lr * gw1, b1 - lr * gb1, w2 - lr * gw2, b2 - lr * gb2), loss

    def run(p):
        p, losses = jax.lax.scan(step, p, None, length=steps)
        return losses[-1]

    return jax.jit(jax.vmap(run))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-train", type=int, default=200)
    ap.add_argument("--hidden", type=int, default=20)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--lambda", dest="lam", type=float, default=0.0)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--noise-std", type=float, default=0.1)
    ap.add_argument("--init-scale", type=float, default=0.1)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--seeds", type=int, default=1)
    a = ap.parse_args()
    x, y, _ = problem(a.n_train, a.hidden, a.noise_std, a.init_scale, 0)  # one data set, as gaugelab's default
    inits = [problem(a.n_train, a.hidden, a.noise_std, a.init_scale, 1 + s)[2] for s in range(a.seeds)]
    p = tuple(jnp.stack([q[k] for q in inits]) for k in range(4))  # [seeds, ...] each
    run = make_run(jnp.asarray(x), jnp.asarray(y), a.lr, a.lam, a.eps, a.steps)
    t0 = time.perf_counter()
    compiled = run.lower(p).compile()
    t1 = time.perf_counter()
    compiled(p).block_until_ready()  # first call (allocations)
    t2 = time.perf_counter()
    loss = compiled(p).block_until_ready()
    t3 = time.perf_counter()
    print(f"seed_steps_per_s {a.seeds * a.steps / (t3 - t2):.1f}")
    print(f"compile_s {t1 - t0:.3f}")
    print(f"final_loss {float(loss[0]):.6g}")


if __name__ == "__main__":
    main()
