"""tiktoken's single-thread encoding rate on a text file, for bench/tokenizer.cpp (the peer in the
same run). tiktoken is built from the same gpt2.tiktoken ranks the C++ tokenizer reads, so no
network is needed. Prints one line: `bytes tokens seconds`. Run with the project's venv Python.
Usage: tiktoken_rate.py RANKS TEXT_FILE REPEATS"""
import sys
import time

import tiktoken
from tiktoken.load import load_tiktoken_bpe

PAT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

ranks_path, text_path, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
enc = tiktoken.Encoding("gpt2-bench", pat_str=PAT, mergeable_ranks=load_tiktoken_bpe(ranks_path),
                        special_tokens={"<|endoftext|>": 50256})
text = open(text_path, encoding="utf-8").read()
enc.encode_ordinary(text[:10000])  # warm-up
best = float("inf")
for _ in range(repeats):
    t0 = time.perf_counter()
    tokens = enc.encode_ordinary(text)
    best = min(best, time.perf_counter() - t0)
print(len(text.encode("utf-8")), len(tokens), best)
