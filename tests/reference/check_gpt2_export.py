"""Loads a directory written by `gaugelab export` with Hugging Face's GPT2LMHeadModel and compares
its logits with ours.

usage: check_gpt2_export.py EXPORT_DIR OURS.json TOLERANCE
OURS.json: {"tokens": [[...], ...], "logits": [flat row-major [batch, seq, vocab]]}
Prints `max_rel_diff <value>` (max |theirs - ours| / max |theirs|) and exits 0 if it is <= TOLERANCE,
1 if not, 2 on a usage or loading error. The test that calls it is tests/gpt2/test_interchange.cpp.
"""
import json
import sys

import torch
from transformers import GPT2LMHeadModel


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    export_dir, ours_path, tol = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with open(ours_path) as f:
        ours = json.load(f)
    model = GPT2LMHeadModel.from_pretrained(export_dir, attn_implementation="eager").eval()
    tokens = torch.tensor(ours["tokens"], dtype=torch.long)
    with torch.no_grad():
        theirs = model(input_ids=tokens).logits.double()
    mine = torch.tensor(ours["logits"], dtype=torch.float64).reshape(theirs.shape)
    rel = float((theirs - mine).abs().max() / theirs.abs().max())
    print(f"max_rel_diff {rel:.3e}")
    return 0 if rel <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
