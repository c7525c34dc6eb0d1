"""The learning-rate grids' runs (analysis/manifest.py GRIDS, run by make_figures.py --grid): one record per run,
read from its trainer log or from a row of the grid's results ledger (analysis/results_ledger.py), and the grid's
arrays per condition (final loss [lr, seed]) that fig_lr_sensitivity.py and the seed-000 claims compute on.

The failure rule is declared here, once: a run failed when it stopped (non-finite loss or gradient), when the
trainer's spike rule called it unstable (gpt2/README.md, "Instability rule": at least --unstable-spikes (10)
steps whose gradient norm exceeds 10 × the median of the previous 100, after warm-up), or when, at a learning rate
above its seed's best, its final validation loss is at least FAILURE_EXCESS nats above that best (below the best lr
a high loss is under-training, not a failure of stability).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import gaugelab_log as gl
import stats

# Declared on 2026-11-29, before any run of the bracketing grid: one nat above the seed's best final validation loss
# is a failed run. The bf16 grid's best-lr losses lie within ~0.05 nats of each other across conditions and its
# Wortsman sensitivities are ~0.36 nats (FIGURES.md), so one nat is far outside the spread of runs that trained, and
# below the ~4 nats between a trained run and the initial loss ln V ≈ 9.9, so a collapse to the unigram plateau or
# worse counts.
FAILURE_EXCESS = 1.0


@dataclass
class Run:
    cond: str            # the run's condition label as the trainer logged it (conditions.hpp): key, "M" for
                         # Muon, "o" for a gauge-offset start, e.g. "oMB"
    lr: float
    seed: int
    final_val: float     # NaN if diverged
    diverged: bool       # stopped by the trainer (non-finite loss or gradient)
    first_loss: float
    step: np.ndarray = field(default_factory=lambda: np.array([]))   # /heads/step (empty from a ledger row)
    attn: np.ndarray = field(default_factory=lambda: np.array([]))   # [records] max |attention logit| over layers, heads
    sqk: np.ndarray = field(default_factory=lambda: np.array([]))    # [records] max s_Q·s_K (NaN without multipliers)
    key: str = ""        # the conditions table's key ("B")
    title: str = ""      # its title as logged ("Muon, B: GaugeFix, offset start")
    reference: str = ""  # the label it is compared with ("oMA"; "" for a reference itself)
    index: int = 0       # the row's place in the conditions table (the order of curves and table rows)
    muon: bool = False
    offset: bool = False
    stop: str = ""       # a diverged run's cause: "non-finite loss" or "non-finite gradient" (the loss still finite)
    drift: float = math.nan          # final Q/K drift max_h |log(s_Q/s_K)| of the multipliers (seed 000 eq. 3)
    eff_imbalance: float = math.nan  # final max_h |log(‖W_Q,eff‖/‖W_K,eff‖)| of the effective maps (what no fix sees)
    best_val: float = math.nan
    stable: bool = True              # the trainer's spike rule (and not diverged)
    n_spikes: int = 0
    steps: int = 0
    precision: str = ""
    bf16_mode: str = ""                # how bf16 ran: "native" (the device's bf16 kernels), "emulated" (rounded
                                       # around float32 GEMMs), "-" for float32; "" in a log from before it was logged
    threads: int = 0
    attn_max: float = math.nan         # largest max |logit| over the run's samples
    attn_signed_max: float = math.nan  # largest signed logit (Kimi K2's S_max) where the log has it, else NaN
    sqk_max: float = math.nan
    run: str = ""                      # the run's directory name inside its grid's root
    git_sha: str = ""
    cpu_bf16: str = ""                 # the CPU's bf16 matmul instructions ("avx512_bf16 amx_bf16"), "-" for none,
                                       # "" in a log from before it was logged
    device: str = ""                   # --device as run ("cpu", "cuda:0"); "" in a log from before it was read here
    processes: int = 0                 # how many processes made the run (a resumed run: more than 1); 0 not read
    drift_peak: float = math.nan       # the trainer's max_drift_max: the largest drift over the run's heads samples
                                       # (seed 000 Table 2's "max drift")
    drift_window: float = math.nan     # largest move of one head's log(s_Q/s_K) from a heads sample at a multiple of
                                       # DRIFT_WINDOW steps to a later one up to the next: what grows between fixes
    sqk_final: float = math.nan        # s_Q·s_K at the last heads sample, mean over layers and heads (§4.4's product)
    gaugefix_every: int = 0            # GaugeFix's interval N as run (the summary's: 0 for a condition that never
                                       # fixes; the configuration's in a log from before the summary had it)

    def __post_init__(self):
        if math.isnan(self.attn_max) and len(self.attn) and np.isfinite(self.attn).any():
            self.attn_max = float(np.nanmax(self.attn))
        if math.isnan(self.sqk_max) and len(self.sqk) and np.isfinite(self.sqk).any():
            self.sqk_max = float(np.nanmax(self.sqk))


# The interval drift_window spans, in steps: seed 000's largest GaugeFix interval (its Table 2's N = 1000), so that a
# run without a fix says how much drift GaugeFix every 1000 steps would let grow between two of its fixes.
DRIFT_WINDOW = 1000


def drift_window(h: dict, window: int = DRIFT_WINDOW) -> float:
    """Largest |ℓ(t) − ℓ(t0)| of one head, ℓ = log(s_Q/s_K), t0 a heads sample at a multiple of `window` steps and t a
    later sample up to the next multiple (t0 < t ≤ t0 + window): what grows from the point a fix every `window` steps
    balances until just before its next fix (the fix acts after the update of each step that is a multiple of N, the
    heads sample after the fix; B is C between fixes). Steps before the first multiple are no window's. h: /heads,
    s_q and s_k [record, layer, head]. NaN without such a pair of samples, without multipliers, or with heads steps
    that do not increase (a log this reader does not understand)."""
    step = np.asarray(h.get("step", []))
    if not {"s_q", "s_k"} <= set(h) or len(step) < 2 or np.any(np.diff(step) <= 0):
        return math.nan
    ratio = np.log(np.asarray(h["s_q"], dtype=float) / np.asarray(h["s_k"], dtype=float)).reshape(len(step), -1)
    best = math.nan
    for i in np.flatnonzero(step % window == 0):
        later = (step > step[i]) & (step <= step[i] + window)
        d = np.abs(ratio[later] - ratio[i])
        if d.size and np.isfinite(d).any():
            best = float(np.nanmax(d)) if math.isnan(best) else max(best, float(np.nanmax(d)))
    return best


# The signed attention-logit maximum (what QK-Clip bounds): read from /heads/<name> when the trainer logs it.
SIGNED_LOGIT = "attn_logit_max_signed"


def label_of(summ: dict, path) -> tuple[str, str, str, str, int]:
    """(label, key, title, reference, index) as the trainer logged them in /summary."""
    if "condition_label" not in summ:
        raise ValueError(f"{path}: the log names no condition label (a run from before the conditions table); "
                         "rerun it with this gaugelab")
    ref = str(summ.get("condition_reference", "-"))
    return (str(summ["condition_label"]), str(summ.get("condition", "")), str(summ.get("condition_title", "")),
            "" if ref == "-" else ref, int(summ.get("condition_index", 0)))


def _max_over_heads(h: dict, name: str) -> np.ndarray:
    if name in h and len(h.get("step", [])) and np.isfinite(h[name]).any():
        return np.nanmax(h[name], axis=(1, 2))
    return np.full(len(h.get("step", [])), math.nan)


def bf16_modes(cfg: dict, summ: dict) -> str:
    """How a run's bf16 ran, from its log: the configuration's mode (auto's choice, written at the start) and the
    summary's (its last process's), joined with '+' when they differ (a run resumed under another mode); "unknown"
    for a bf16 run that logged neither; "-" for float32. One reading for the runner and the analysis alike."""
    modes = {str(m) for m in (cfg.get("bf16-mode", ""), summ.get("bf16_mode", "")) if m not in ("", "auto", None)}
    precision = str(summ.get("precision", cfg.get("precision", "")))
    if precision not in ("bf16", ""):
        return "-"
    joined = "+".join(sorted(modes - {"-"}))
    return joined or ("unknown" if precision == "bf16" else "")  # "": a log too old to say its precision


def logged_bf16_modes(path: Path) -> str | None:
    """bf16_modes of the log at `path`, finished or not; None when it cannot be read (being written, cut off)."""
    try:
        with gl.open_log(path) as f:
            prov = gl.provenance(f)
            summ = gl.summary(f) if "summary" in f else {}
    except Exception:  # noqa: BLE001 - a log that cannot be read now is not judged now
        return None
    cfg = prov.get("config", {})
    return bf16_modes(json.loads(cfg) if isinstance(cfg, str) else cfg, summ)


def load(path: Path) -> Run | None:
    """The run's results from its log, or None for a run still going or cut off (neither completed nor diverged)."""
    with gl.open_log(path) as f:
        prov = gl.provenance(f)
        cfg = prov.get("config", {})
        if isinstance(cfg, str):
            cfg = json.loads(cfg)
        s = gl.series(f)
        h = gl.heads(f)
        summ = gl.summary(f)
    diverged = bool(int(summ.get("diverged", 0)))
    if not diverged and not int(summ.get("completed", 0)):
        return None
    label, key, title, reference, index = label_of(summ, path)
    final_val = float(summ.get("final_val_loss", math.nan))
    attn = _max_over_heads(h, "attn_logit_max") if "attn_logit_max" in h else np.array([])
    signed = _max_over_heads(h, SIGNED_LOGIT)
    stop = str(summ.get("stop_reason", ""))
    if diverged and stop not in ("non-finite loss", "non-finite gradient"):  # a log from before stop_reason
        last_loss = float(s["loss"][-1]) if len(s["loss"]) else math.nan
        stop = "non-finite gradient" if math.isfinite(last_loss) else "non-finite loss"
    return Run(label, float(cfg["lr"]), int(cfg.get("seed", 0)), math.nan if diverged else final_val,
               diverged, float(s["loss"][0]) if len(s["loss"]) else math.nan, np.asarray(h.get("step", [])), attn,
               _max_over_heads(h, "s_qk"),
               key=key, title=title or label, reference=reference, index=index,
               muon=str(summ.get("optimizer", cfg.get("optimizer", "adamw"))) == "muon",
               offset=float(cfg.get("qk-gauge-init", 0) or 0) > 0, stop=stop if diverged else "",
               drift=float(summ.get("final_drift_max", math.nan)),
               eff_imbalance=float(summ.get("final_eff_imbalance_max", math.nan)),
               best_val=float(summ.get("best_val_loss", math.nan)),
               stable=bool(int(summ.get("stable", 0 if diverged else 1))) and not diverged,
               n_spikes=int(summ.get("n_spikes", 0)), steps=int(summ.get("steps", 0)),
               precision=str(summ.get("precision", cfg.get("precision", ""))),
               bf16_mode=bf16_modes(cfg, summ), cpu_bf16=str(summ.get("cpu_bf16", "")),
               device=str(cfg.get("device", "")), processes=int(summ.get("processes", 0) or 0),
               threads=int(cfg.get("threads", prov.get("threads", 0)) or 0),
               attn_signed_max=float(np.nanmax(signed)) if np.isfinite(signed).any() else math.nan,
               run=Path(path).parent.name if Path(path).name == "log.h5" else Path(path).stem,
               git_sha=str(prov.get("git_sha", "")),
               drift_peak=float(summ.get("max_drift_max", math.nan)),
               drift_window=drift_window(h),
               sqk_final=float(np.nanmean(h["s_qk"][-1])) if "s_qk" in h and len(h["s_qk"]) and
               np.isfinite(h["s_qk"][-1]).any() else math.nan,
               gaugefix_every=int(summ.get("gaugefix_every", cfg.get("gaugefix-every", 0)) or 0))


def find_logs(items: list[str]) -> list[Path]:
    out: list[Path] = []
    for it in items:
        p = Path(it)
        if p.is_dir():
            out += sorted(q for q in p.glob("*/log.h5"))
        else:
            out.append(p)
    return out


def initial_loss(runs: list[Run]) -> float:
    """L0: the mean step-1 training loss of the runs (≈ ln V), where a diverged run is counted."""
    return float(np.nanmean([r.first_loss for r in runs]))


def labels_in_order(runs: list[Run]) -> list[str]:
    """Every label of `runs`, in the conditions table's order: AdamW before Muon, balanced before offset."""
    first = {}
    for r in runs:
        first.setdefault(r.cond, r)
    return sorted(first, key=lambda c: (first[c].offset, first[c].muon, first[c].index))


def grid(runs: list[Run], cond: str, L0: float) -> tuple[np.ndarray, list[int], np.ndarray]:
    """lrs [n], seeds [m], clipped final losses [n, m], over the seeds that ran every one of the condition's lrs: a
    seed still running (or cut short) would have its sensitivity taken over fewer lrs, so it is left out whole."""
    rs = [r for r in runs if r.cond == cond]
    lrs = np.array(sorted({r.lr for r in rs}))
    seeds = sorted({r.seed for r in rs})
    L = np.full((len(lrs), len(seeds)), math.nan)
    for r in rs:
        v = L0 if r.diverged or not math.isfinite(r.final_val) else min(r.final_val, L0)
        L[np.searchsorted(lrs, r.lr), seeds.index(r.seed)] = v
    whole = ~np.isnan(L).any(axis=0)
    return lrs, [s for s, w in zip(seeds, whole) if w], L[:, whole]


def paired_by_seed(runs: list[Run], c: str, ref: str, L0: float, fn=stats.sensitivity_per_seed
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """Per-seed statistic `fn` ([n_lr, n_seed] losses -> [n_seed]; Wortsman's sensitivity by default) of c and ref
    over the seeds both ran on the same learning rates, in seed order."""
    lrs_c, seeds_c, Lc = grid(runs, c, L0)
    lrs_r, seeds_r, Lr = grid(runs, ref, L0)
    if len(lrs_c) != len(lrs_r) or not np.allclose(lrs_c, lrs_r):
        return None
    common = [s for s in seeds_c if s in seeds_r]
    if not common:
        return None
    return (fn(Lc[:, [seeds_c.index(s) for s in common]]), fn(Lr[:, [seeds_r.index(s) for s in common]]))


def failed(runs: list[Run], cond: str, L0: float) -> dict[tuple[float, int], bool]:
    """(lr, seed) -> whether that run of `cond` failed by the module's failure rule, over the seeds that ran every lr."""
    lrs, seeds, L = grid(runs, cond, L0)
    L = np.where(L >= L0, np.nan, L)  # at the initial loss: stopped, or never left it
    bad = stats.failed_by_loss(L, FAILURE_EXCESS)
    above = np.zeros_like(bad)
    for j in range(L.shape[1]):
        ok = np.isfinite(L[:, j])
        above[:, j] = np.arange(len(lrs)) > (int(np.nanargmin(L[:, j])) if ok.any() else -1)
    by = {(r.lr, r.seed): r for r in runs if r.cond == cond}
    # below the best lr a high loss (even the initial one: a learning rate too small to leave it) is under-training,
    # not failure, as the rule declares; a stop or the spike rule fails a run at any lr
    return {(float(lr), s): bool((bad[i, j] and above[i, j])
                                 or by[(float(lr), s)].diverged or not by[(float(lr), s)].stable)
            for i, lr in enumerate(lrs) for j, s in enumerate(seeds)}


def at(runs: list[Run], key: str, lr: float, **match) -> dict[int, Run]:
    """seed -> the run of condition key `key` (AdamW, balanced start) at learning rate lr (relative tolerance 1e-6),
    with every attribute in `match` equal (e.g. threads=2)."""
    out = {}
    for r in runs:
        if r.key == key and not r.muon and not r.offset and math.isclose(r.lr, lr, rel_tol=1e-6) and \
                all(getattr(r, k) == v for k, v in match.items()):
            out[r.seed] = r
    return out
