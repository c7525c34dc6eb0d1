"""analysis/head_projection_error.py on a hand-made checkpoint: an optimizer direction that is an exact
orbit tangent of every head is reported as all vertical, a horizontal one as none."""
from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "tests"))
from built_module import PACKAGE_DIR, import_gaugelab  # noqa: E402

g = import_gaugelab()


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    header, blobs, at = {}, [], 0
    for name, t in tensors.items():
        b = np.ascontiguousarray(t, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    h = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def checkpoint(tmp: Path, vertical: bool) -> Path:
    rng = np.random.default_rng(0)
    d, H = 8, 2
    dh = d // H
    c_attn = rng.standard_normal((3 * d, d)) / np.sqrt(d)
    c_proj = rng.standard_normal((d, d)) / np.sqrt(d)
    m_attn, m_proj = np.zeros_like(c_attn), np.zeros_like(c_proj)
    for h in range(H):
        sl = slice(h * dh, (h + 1) * dh)
        head = g.AttentionHead(c_attn[:d][sl].T.copy(), c_attn[d:2 * d][sl].T.copy(), c_attn[2 * d:][sl].T.copy(),
                               c_proj[:, sl].T.copy(), np.zeros(dh), np.zeros(dh), np.zeros(dh))
        if vertical:
            t = g.head_orbit_tangent(head, rng.standard_normal((dh, dh)), rng.standard_normal((dh, dh)))
        else:
            r = g.AttentionHead(*(rng.standard_normal(x.shape) for x in (head.W_q, head.W_k, head.W_v, head.W_o)),
                                np.zeros(dh), np.zeros(dh), np.zeros(dh))
            t = g.head_horizontal_projection(head, r)
        m_attn[:d][sl], m_attn[d:2 * d][sl], m_attn[2 * d:][sl] = t.W_q.T, t.W_k.T, t.W_v.T
        m_proj[:, sl] = t.W_o.T
    out = tmp / ("vertical" if vertical else "horizontal")
    out.mkdir()
    (out / "config.json").write_text(json.dumps({"model": {"n_layer": 1, "n_head": H}}))
    write_safetensors(out / "model.safetensors", {"h.0.attn.c_attn.weight": c_attn, "h.0.attn.c_proj.weight": c_proj})
    ones = lambda a: np.ones_like(a)  # noqa: E731  (v = 1: the direction is m itself, up to 1e-8)
    write_safetensors(out / "optimizer.safetensors", {"m/h.0.attn.c_attn.weight": m_attn, "m/h.0.attn.c_proj.weight": m_proj,
                                                      "v/h.0.attn.c_attn.weight": ones(m_attn),
                                                      "v/h.0.attn.c_proj.weight": ones(m_proj)})
    return out


@pytest.mark.parametrize("vertical", [True, False])
def test_the_vertical_share_of_a_tangent_is_one_and_of_a_horizontal_direction_zero(tmp_path, vertical):
    ck = checkpoint(tmp_path, vertical)
    r = subprocess.run([sys.executable, str(ROOT / "analysis" / "head_projection_error.py"), str(ck), "--random", "2"],
                       capture_output=True, text=True, timeout=120,
                       env={"GAUGELAB_BUILD_DIR": str(PACKAGE_DIR.parent), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout + r.stderr
    shares = [float(line.split()[2]) for line in r.stdout.splitlines()[2:4]]
    assert all(abs(s - (1.0 if vertical else 0.0)) < 1e-5 for s in shares), r.stdout
