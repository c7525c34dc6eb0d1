# %% [markdown]
# # The gauge tools in your own PyTorch loop (gaugelab.torch)
#
# `gaugelab train` runs seed 000's conditions in its own C++ trainer. A PyTorch user can run the same
# operations (the trainer's own code, registered as `torch.ops.gaugelab.*`) in the loop they already have.
# Here a small nanoGPT-style model learns a noisy token chain under conditions **A** (weight decay on every
# multiplier), **B** (no Q/K multiplier decay, GaugeFix after each step) and **C** (neither), and we watch,
# per head, the scale product s_Q·s_K and the drift |log(s_Q/s_K)| that seed 000 is about.
#
# The start is gauge-offset (`offset_qk_gauge_`, the trainer's `--qk-gauge-init`): each head moved along its
# Q/K multiplier orbit, the function unchanged, drift 2σ|z|. From multipliers all at 1 the three conditions
# would keep r_Q = r_K up to rounding (equal gradients), and GaugeFix would have nothing to remove.
#
# Run it in the torch venv with the build on the path (~15 s on 2 cores):
# `PYTHONPATH=build/python ~/.cache/gaugelab/venv/bin/python notebooks_export/torch_gauge_tools.py`
# (`GAUGELAB_STEPS` shortens it; the figure goes to `$GAUGELAB_FIGURES`, default `figures/`).

# %%
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

import gaugelab.torch as gt  # noqa: E402
from gaugelab.torch.nanogpt import NanoGPT  # noqa: E402  (stands in for your model)

STEPS = int(os.environ.get("GAUGELAB_STEPS", "300"))
OUT = os.environ.get("GAUGELAB_FIGURES", "figures")
cfg = dict(n_layer=2, n_head=4, n_embd=64, block_size=32, vocab_size=64)
torch.set_num_threads(1)


def token_chain(n, seed=7):
    """A noisy first-order chain over 64 ids: the next id follows from the last one 4 times in 5."""
    g = torch.Generator().manual_seed(seed)
    t = torch.empty(n, dtype=torch.long)
    x = 1
    for i in range(n):
        x = int(torch.randint(64, (1,), generator=g)) if torch.rand(1, generator=g) < 0.2 else (x * 37 + 11) % 64
        t[i] = x
    return t


tokens = token_chain(20000)

# %% [markdown]
# ## The lines that add the tools to a loop
# Everything specific to gaugelab is in the four numbered lines; the rest is a plain PyTorch loop.

# %%
def train(cond, steps=STEPS, seed=0):
    torch.manual_seed(seed)
    model = NanoGPT(cfg)
    gt.add_multipliers(model)                                                   # 1: seed 000's multipliers at 1
    gt.offset_qk_gauge_(model, 0.5, torch.Generator().manual_seed(seed))        #    (a gauge-offset start)
    opt = torch.optim.AdamW(gt.param_groups(model, cond), lr=1e-2, betas=(0.9, 0.95))  # 2: the condition's decay
    gt.attach(opt, model, cond)                                                 # 3: its step hooks (B: GaugeFix)
    s = gt.head_stats(model)
    history = [(0, float("nan"), s["s_q"] * s["s_k"], s["drift"])]                # the start
    for step in range(1, steps + 1):
        i = torch.randint(len(tokens) - 33, (16,))
        xy = torch.stack([tokens[j:j + 33] for j in i.tolist()])
        loss = model(xy[:, :32], xy[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(gt.clipped_parameters(model), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 10 == 0 or step == steps:
            s = gt.head_stats(model)                                            # 4: [L, H] s_q, s_k, drift, rho
            history.append((step, loss.item(), s["s_q"] * s["s_k"], s["drift"]))
    return history


runs = {c: train(c) for c in "ABC"}

# %% [markdown]
# ## s_Q·s_K and drift per head

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
colors = {"A": "tab:blue", "B": "tab:green", "C": "tab:red"}
styles = {"A": "--", "B": "-", "C": ":"}
FLOOR = 1e-9  # drift below this is drawn at it (float32 rounding leaves ~1e-7 after a fix, sometimes exactly 0)
for c, hist in runs.items():
    steps = [h[0] for h in hist]
    prod = torch.stack([h[2] for h in hist]).flatten(1)      # [time, L·H]
    drift = torch.stack([h[3] for h in hist]).flatten(1)
    for j in range(prod.shape[1]):
        label = gt.condition(c)["title"] if j == 0 else None
        axes[0].plot(steps, prod[:, j], styles[c], color=colors[c], alpha=0.7, lw=1.2, label=label)
        axes[1].plot(steps, drift[:, j].clamp_min(FLOOR), styles[c], color=colors[c], alpha=0.7, lw=1.2, label=label)
axes[1].axhline(2 ** -23, color="grey", lw=0.8)
axes[1].text(steps[-1], 2 ** -23 * 2, "float32 ulp of 1", ha="right", va="bottom", fontsize=8, color="grey")
axes[0].set(xlabel="step", ylabel=r"$s_Q\,s_K$ per head", title="scale product (every head)")
axes[1].set(xlabel="step", ylabel=r"drift $|\log(s_Q/s_K)|$ per head", yscale="log", ylim=(FLOOR / 2, 10),
            title="drift from a gauge-offset start")
axes[0].legend(fontsize=8)
axes[1].legend(fontsize=8, loc="center right")  # the empty band between the offset heads and rounding
fig.tight_layout()
os.makedirs(OUT, exist_ok=True)
path = os.path.join(OUT, "torch_gauge_tools.png")
fig.savefig(path, dpi=120)
print("figure:", path)

# %% [markdown]
# ## What the run shows

# %%
for c, hist in runs.items():
    step, loss, prod, drift = hist[-1]
    print(f"{gt.condition(c)['title']:<16} loss {loss:.3f}  max s_Q·s_K {float(prod.max()):.3f}  "
          f"max drift {float(drift.max()):.2e}")
