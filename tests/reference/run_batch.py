"""Several reference trainings in one Python process: each line of FILE is one command line of
nanogpt_train_ref.py or torch_ops_train.py (the script's file name, then its arguments, shell-quoted), run in
order by calling that script's main() with it. One process pays torch's import once (~2 CPU-s on the
development machine) instead of once per run: tests/train/test_train_nanogpt.cpp's 14 runs were 14 processes (52
CPU-s under CTest), one per test case now 5 (19 CPU-s); all 13 distinct runs in one process took 8 s.
Each run sets its own thread count and reads its own initial weights and batches; nothing a run leaves in the
process (torch's generators, which no run draws from, or gaugelab.torch's tables) enters the next one's
arithmetic: a batch's losses.json and final.safetensors were seen equal, byte for byte, to those of one process
per run (the 13 distinct runs of that test file, both scripts, torch 2.15).
usage: run_batch.py FILE   (PYTHONPATH must hold the build's python/ folder when a line runs torch_ops_train.py)
"""
import importlib
import os
import shlex
import sys

SCRIPTS = ("nanogpt_train_ref.py", "torch_ops_train.py")


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: run_batch.py FILE")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    with open(argv[0]) as f:
        lines = [(n, shlex.split(line)) for n, line in enumerate(f, 1) if line.strip()]
    for n, words in lines:
        if words[0] not in SCRIPTS:
            sys.exit(f"run_batch.py: error: {argv[0]} line {n}: '{words[0]}' is none of {', '.join(SCRIPTS)}")
        print(f"run_batch.py: line {n}: {' '.join(words)}", flush=True)
        importlib.import_module(words[0][:-3]).main(words[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
