"""The in-Python step of the loop in one interpreter (the torch venv, NumPy 2): a `gaugelab export` loaded
by transformers' GPT2LMHeadModel, a Q/K gauge of layer 0's head 0 applied with `import gaugelab` to its
float32 weights and written back, the logits compared. Run by test_loop_in_venv.py as
`python loop_gauge_logits.py HF_DIR` with the built module on PYTHONPATH; prints one JSON line."""
from __future__ import annotations

import json
import sys

import numpy as np
import torch
import transformers

import gaugelab as g


def main(hf_dir: str) -> None:
    model = transformers.GPT2LMHeadModel.from_pretrained(hf_dir).eval()
    cfg = json.load(open(f"{hf_dir}/config.json"))
    trained = cfg["gaugelab_trained_ids"]
    ids = torch.tensor([trained[:12]])
    attn = model.transformer.h[0].attn
    d, dk = cfg["n_embd"], cfg["n_embd"] // cfg["n_head"]
    w0, b0 = attn.c_attn.weight.detach().clone(), attn.c_attn.bias.detach().clone()  # Conv1D [d, 3d]: q | k | v

    def logits() -> np.ndarray:
        with torch.no_grad():
            return model(ids).logits[0].numpy().astype(np.float64)

    def write(wq, bq, wk, bk) -> None:
        with torch.no_grad():
            attn.c_attn.weight.copy_(w0)
            attn.c_attn.bias.copy_(b0)
            attn.c_attn.weight[:, 0:dk] = torch.from_numpy(np.ascontiguousarray(wq))
            attn.c_attn.bias[0:dk] = torch.from_numpy(np.ascontiguousarray(bq))
            attn.c_attn.weight[:, d:d + dk] = torch.from_numpy(np.ascontiguousarray(wk))
            attn.c_attn.bias[d:d + dk] = torch.from_numpy(np.ascontiguousarray(bk))

    before = logits()
    w, b = w0.numpy(), b0.numpy()  # float32 arrays of NumPy 2 in this venv
    head = g.AttentionHead(w[:, 0:dk], w[:, d:d + dk], w[:, 2 * d:2 * d + dk], attn.c_proj.weight.detach().numpy()[0:dk, :],
                           b[0:dk], b[d:d + dk], b[2 * d:2 * d + dk])
    S = 4 * g.random_gl(g.Rng(7), dk, kappa=10.0, dtype=np.float32)  # condition number 10, |det| 4^dk
    gauged = g.apply_qk_gauge(head, S)
    assert gauged.W_q.dtype == np.float32
    write(gauged.W_q, gauged.b_q, gauged.W_k, gauged.b_k)
    after = logits()
    write(head.W_q @ S, head.b_q @ S, head.W_k, head.b_k)  # not a gauge: the same S on the queries alone
    broken = logits()
    untrained = np.setdiff1d(np.arange(before.shape[1]), trained)
    scale = float(np.max(np.abs(before)))
    print(json.dumps({"numpy": np.__version__, "scale": scale, "gauge_change": float(np.max(np.abs(after - before))),
                      "non_gauge_change": float(np.max(np.abs(broken - before))),
                      "weights_moved": float(np.max(np.abs(gauged.W_q - head.W_q))),
                      "untrained_max_abs_logit": float(np.max(np.abs(before[:, untrained])))}))


if __name__ == "__main__":
    main(sys.argv[1])
