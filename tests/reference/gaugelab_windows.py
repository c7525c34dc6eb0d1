"""gaugelab train's training windows, recomputed from the documented rule (gpt2/train/data_loader.hpp): sample
g = ((step·accum + micro)·world + rank)·B + row of a run starts at mix_seed(seed, g) mod (N − T) of a token file
of N tokens. The references that must read the trainer's batches (nanogpt_train_ref.py, nanogpt_ref.py --data)
take them from here."""
import numpy as np

MASK64 = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def mix_seed(seed, index):
    return splitmix64(splitmix64(seed) ^ splitmix64((index + 0x632BE59BD9B4E019) & MASK64))


def windows(tokens, seed, step, micro, accum, B, T):
    """[B, T+1] int64 numpy windows of gaugelab's rule (world 1, rank 0); tokens: a 1-d array (a memmap too)."""
    n_starts = len(tokens) - T
    if n_starts < 1:
        raise ValueError(f"{len(tokens)} tokens hold no window of {T + 1}")
    first = (step * accum + micro) * B
    return np.stack([np.asarray(tokens[s:s + T + 1], dtype=np.int64)
                     for s in (mix_seed(seed, first + r) % n_starts for r in range(B))])
