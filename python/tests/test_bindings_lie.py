"""The Lie-algebra view from Python (core/gauge_lie.hpp): the exact horizontal projection of a head's
direction is orthogonal to every orbit tangent, Alg. 2's approximation is exact on tangents only, and
the factor pair's projection keeps the represented first-order motion; float64 and float32."""
from __future__ import annotations

import numpy as np
import pytest

from built_module import import_gaugelab

g = import_gaugelab()

DTYPES = [np.float64, np.float32]
TOL = {np.float64: 1e-10, np.float32: 1e-3}  # relative; float32 Sylvester solves through eigenbases


def norm(h) -> float:
    return float(np.sqrt(g.head_inner(h, h)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_head_projection_is_orthogonal_to_every_orbit_tangent(dtype):
    for seed in range(10):
        rng = g.Rng(seed)
        d, dk, dv = 5 + seed % 3, 1 + seed % 3, 1 + (seed // 3) % 3
        head = g.random_head(rng, d, dk, dv, dtype=dtype)
        direction = g.random_head(rng, d, dk, dv, dtype=dtype)
        p = g.head_horizontal_projection(head, direction)
        for sector, r in ((0, dk), (1, dv)):
            for a in range(r):
                for b in range(r):
                    X, Y = np.zeros((dk, dk), dtype), np.zeros((dv, dv), dtype)
                    (X if sector == 0 else Y)[a, b] = 1
                    t = g.head_orbit_tangent(head, X, Y)
                    assert abs(g.head_inner(p, t)) <= TOL[dtype] * norm(direction) * norm(t)
        t = g.head_orbit_tangent(head, g.randn(rng, dk, dk, 1.0, dtype), g.randn(rng, dv, dv, 1.0, dtype))
        assert norm(g.head_horizontal_projection(head, t)) <= 10 * TOL[dtype] * norm(t)
        assert norm(g.head_horizontal_projection_approx(head, t)) <= 10 * TOL[dtype] * norm(t)


def test_factor_projection_keeps_the_represented_motion():
    rng = g.Rng(3)
    A, B = g.randn(rng, 5, 2, 1.0, np.float64), g.randn(rng, 4, 2, 1.0, np.float64)
    GA, GB = g.randn(rng, 5, 2, 1.0, np.float64), g.randn(rng, 4, 2, 1.0, np.float64)
    PA, PB = g.factor_horizontal_projection(A, B, GA, GB)
    np.testing.assert_allclose(PA @ B.T + A @ PB.T, GA @ B.T + A @ GB.T, atol=1e-12)
    assert not np.allclose(PA, GA)  # something vertical was removed
    X = g.solve_sylvester_psd(A.T @ A, B.T @ B, np.eye(2))
    np.testing.assert_allclose(A.T @ A @ X + X @ (B.T @ B), np.eye(2), atol=1e-12)
