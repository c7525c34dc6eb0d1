"""The researcher's daily loop, end to end, as README.md tells it: train -> Ctrl-C -> `train --resume --out
DIR` (the directory alone) -> `gaugelab plot` of it beside another run -> eval / generate / export -> the
export loaded by transformers (when the LibTorch venv has it) -> `import gaugelab` applying a head's Q/K gauge
to the exported weights (when the bindings are built): the head's logits do not move.
Needs the build's gaugelab (GAUGELAB_BUILD_DIR, default build/); skipped with the reason otherwise."""
from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("GAUGELAB_BUILD_DIR", ROOT / "build"))
BINARY = BUILD / "gaugelab"
VENV_PY = Path(os.environ.get("GAUGELAB_VENV", Path.home() / ".cache/gaugelab/venv")) / "bin/python"
SMALL = ["--data", "synthetic:200", "--model", "nano", "--n-embd", "32", "--block-size", "32", "--batch-size", "2",
         "--eval-batches", "1", "--eval-every", "20", "--warmup-iters", "2", "--threads", "1", "--peak-tflops", "1",
         "--log-every", "1000"]


ENV = {**os.environ, "GAUGELAB_ANALYSIS_DIR": str(ROOT / "analysis")}  # plot runs this checkout's scripts


def gaugelab(*argv, cwd, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([str(BINARY), *map(str, argv)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=ENV)


def summary(log: Path) -> dict:
    import h5py

    with h5py.File(log, "r") as f:
        return {k: f["summary"].attrs[k] for k in f["summary"].attrs}


def safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a safetensors file (8-byte header length, JSON header, raw data)."""
    raw = path.read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        assert meta["dtype"] == "F32", meta
        a, b = meta["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.float32).reshape(meta["shape"])
    return out


def test_train_interrupt_resume_plot_eval_export_and_gauge_the_export(tmp_path):
    if not BINARY.exists():
        pytest.skip(f"SKIPPED: no gaugelab binary at {BINARY} (build first)")
    run, other = tmp_path / "run", tmp_path / "other"
    # 1. Train until Ctrl-C (SIGINT): a checkpoint and a closed log, exit 0.
    p = subprocess.Popen([str(BINARY), "train", *SMALL, "--max-iters", "100000", "--ckpt-every", "100000",
                          "--out", str(run)], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not (run / "log.h5").exists():
        time.sleep(0.2)
    time.sleep(3)  # some steps
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 0, out
    assert "gaugelab train --resume --out" in out  # the hint names the whole command
    steps = int(summary(run / "log.h5")["steps"])
    assert steps > 0
    # 2. Resume from the directory alone (a shorter end, so the cosine is re-planned).
    r = gaugelab("train", "--resume", "--out", run, "--max-iters", steps + 3, "--replan", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    done = summary(run / "log.h5")
    assert int(done["completed"]) == 1
    # ... and its time is both processes': /tables/processes holds one row each, the summary their sum.
    import h5py

    with h5py.File(run / "log.h5", "r") as f:
        t = {k: f["tables/processes"][k][()] for k in ("start_step", "end_step", "seconds")}
    assert list(t["start_step"]) == [0, steps] and list(t["end_step"]) == [steps, steps + 3]
    assert int(done["processes"]) == 2 and float(done["seconds_this_process"]) == t["seconds"][1]
    assert float(done["seconds_total"]) == pytest.approx(t["seconds"].sum()) and t["seconds"][0] > 1.0
    # 3. Another run, and both on one plot.
    r = gaugelab("train", *SMALL, "--max-iters", "6", "--lr", "1e-3", "--out", other, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    png = tmp_path / "loss.png"
    r = gaugelab("plot", run, other, "--metric", "loss", "--out", png, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"
    # ... and through the notebook template (notebooks_export/template_my_runs.py), run as a script.
    env = {**os.environ, "GAUGELAB_ROOT": str(ROOT), "MY_RUNS": f"{run} {other}", "MY_FIGURES": str(tmp_path / "mine")}
    t = subprocess.run([sys.executable, str(ROOT / "notebooks_export" / "template_my_runs.py")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
    assert t.returncode == 0, t.stderr
    assert "lr (differs)" in t.stdout
    assert (tmp_path / "mine" / "curves.png").read_bytes()[:4] == b"\x89PNG"
    # 4. eval (the data directory means its val.bin), generate, export.
    ckpt = sorted((run / "checkpoints").glob("step_*"))[-1]
    r = gaugelab("eval", ckpt, "--data", run / "data", "--batches", "1", "--batch-size", "2", "--threads", "1",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    used = [r]
    val = run / "data" / "val.bin"
    first = int(np.fromfile(val, dtype=np.uint16, count=1)[0])
    r = gaugelab("generate", ckpt, "--prompt-tokens", first, "--max-new-tokens", "3", "--temperature", "0",
                 "--threads", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    used.append(r)
    hf = tmp_path / "hf"
    r = gaugelab("export", ckpt, "--out", hf, cwd=tmp_path)
    used.append(r)
    assert r.returncode == 0, r.stderr
    assert all("settings {" not in x.stderr for x in used), [x.stderr for x in used]  # train's line only
    # 5. transformers reads the export (the venv holds it; CI installs it).
    if VENV_PY.exists():
        code = ("import torch, transformers; m = transformers.GPT2LMHeadModel.from_pretrained(%r); "
                "print('ok', tuple(m(torch.tensor([[%d]])).logits.shape))" % (str(hf), first))
        t = subprocess.run([str(VENV_PY), "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=300)
        assert t.returncode == 0 and "ok (1, 1, 50257)" in t.stdout, t.stderr[-2000:]
    # 6. The bindings: head 0 of layer 0 of the export, its logits under a random Q/K gauge.
    sys.path.insert(0, str(BUILD / "python"))
    try:
        import gaugelab as g
    except ImportError as e:
        pytest.skip(f"SKIPPED: the gaugelab Python module is not built ({e})")
    w = safetensors(hf / "model.safetensors")
    cfg = json.loads((hf / "config.json").read_text())
    d, h = cfg["n_embd"], cfg["n_head"]
    dk = d // h
    c_attn = w["h.0.attn.c_attn.weight"].astype(np.float64)  # [d, 3d], Conv1D (x @ W): columns q | k | v
    o = w["h.0.attn.c_proj.weight"].astype(np.float64)        # [d, d]
    wq, wk, wv = c_attn[:, 0:dk], c_attn[:, d:d + dk], c_attn[:, 2 * d:2 * d + dk]
    head = g.AttentionHead(wq, wk, wv, o[0:dk, :])
    rng = g.Rng(7)
    x = g.randn(rng, 16, d, dtype=np.float64)
    S = g.random_gl(rng, dk, kappa=10.0, dtype=np.float64)
    before, after = g.head_logits(head, x), g.head_logits(g.apply_qk_gauge(head, S), x)
    assert np.max(np.abs(after - before)) <= 1e-9 * max(1.0, np.max(np.abs(before)))
    assert np.max(np.abs(g.apply_qk_gauge(head, S).W_q - wq)) > 1e-3  # the weights did move
