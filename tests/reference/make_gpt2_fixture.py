"""Writes the GPT-2 forward-pass fixture the C++ tests compare against (tests/fixtures/gpt2/).

An independent implementation, Hugging Face `transformers`' GPT2LMHeadModel, is built from a small
config with random weights (nothing is downloaded), saved with `save_pretrained` (model.safetensors +
config.json, exactly as Hugging Face writes them), and its logits and loss for fixed token sequences
are recorded in reference.json. Every parameter is drawn at a scale where logits spread over several
units (the default 0.02 init would make nearly uniform logits, a weak check), biases and LayerNorm
included. The reference forward runs in float64 on the float32 weights, so the fixture's own rounding
is far below the float32 tolerance the C++ test applies.

Run with the project's venv:  ~/.cache/gaugelab/venv/bin/python tests/reference/make_gpt2_fixture.py
"""
import json
import os
import sys

import torch
import transformers
from transformers import GPT2Config, GPT2LMHeadModel

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "gpt2")
SEED = 20240521
CONFIG = dict(n_layer=2, n_head=2, n_embd=64, n_positions=32, vocab_size=500,  # 500: padded to 512 by us
              layer_norm_epsilon=1e-5, activation_function="gelu_new",
              resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=None, eos_token_id=None)
BATCH, SEQ = 2, 16


def randomize(model, gen):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name.endswith("ln_f.weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))
            elif name.endswith(".bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            elif "wte" in name or "wpe" in name:
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            else:  # Conv1D weights [in, out]
                p.copy_(p.shape[0] ** -0.5 * torch.randn(p.shape, generator=gen))


def main():
    gen = torch.Generator().manual_seed(SEED)
    cfg = GPT2Config(**CONFIG)
    model = GPT2LMHeadModel(cfg).eval()
    randomize(model, gen)
    os.makedirs(OUT, exist_ok=True)
    model.save_pretrained(OUT, safe_serialization=True)
    extra = os.path.join(OUT, "generation_config.json")
    if os.path.exists(extra):
        os.remove(extra)  # not part of the GPT-2 interchange

    tokens = torch.randint(0, CONFIG["vocab_size"], (BATCH, SEQ), generator=gen)
    # Reload what was written (the file is what the C++ side reads), then run in float64.
    ref = GPT2LMHeadModel.from_pretrained(OUT, attn_implementation="eager").eval().double()
    with torch.no_grad():
        out = ref(input_ids=tokens, labels=tokens)  # labels shift inside: loss of tokens[1:] from tokens[:-1]
    record = {
        "comment": "written by tests/reference/make_gpt2_fixture.py; logits row-major [batch, seq, vocab]",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "seed": SEED,
        "tokens": tokens.tolist(),
        "logits_shape": list(out.logits.shape),
        "logits": [float(f"{v:.9g}") for v in out.logits.flatten().tolist()],
        "loss": float(out.loss),
    }
    with open(os.path.join(OUT, "reference.json"), "w") as f:
        json.dump(record, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT}: loss {record['loss']:.6f}, logits {record['logits_shape']}", file=sys.stderr)


if __name__ == "__main__":
    main()
