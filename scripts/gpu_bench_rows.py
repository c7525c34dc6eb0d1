#!/usr/bin/env python3
"""The rows, twin checks and table of scripts/gpu-bench.sh, read from its work directory WORK.

    gpu_bench_rows.py flags STAGE                 a row of ours: its condition, then its kernel flags
    gpu_bench_rows.py row WORK STAGE STEPS        one row's summary text (exit 1: nothing was logged)
    gpu_bench_rows.py twins                       the twin pairs, one "A B" a line
    gpu_bench_rows.py twin WORK A B STEPS         one twin check: PASS / FAIL / NOT-COMPARED and why (exit 0 / 1 / 2)
    gpu_bench_rows.py table WORK DEVICE PEAK STEPS   the markdown table of every row WORK/summary.txt names
    gpu_bench_rows.py oom LOG DEVICE STATUS       the out-of-memory row: its error line and why it meets the contract
                                                  or not (exit 0 / 1)

Ours: WORK/ours_STAGE/log.h5 when h5py imports and the file opens (a row killed hard may leave it unreadable),
else the progress lines of WORK/ours_STAGE.txt (`step N/M | loss X | ... | T tok/s`: the loss to 4 decimals,
tokens/s the trainer's running mean). Peers: the JSON line of WORK/peer_MODE.json. The stages' outcome: the last
line about each stage in WORK/summary.txt (`<s>s <stage> passed|FAILED|skipped ...`), so a dead row is shown
dead. Needs only the standard library (h5py when present)."""
import json
import math
import os
import re
import statistics
import sys

# (stage, label): the table's rows in its order. kernels() gives the flags each row of ours runs with (`flags`).
ROWS = [
    ("peer_eager", "nanoGPT eager"),
    ("peer_compile", "nanoGPT + torch.compile"),
    ("plain", "ours, no multipliers (N)"),
    ("plain_aten_ce", "ours N, --lm-head-kernel aten"),
    ("plain_aten_ln", "ours N, --ln-kernel aten"),
    ("plain_graph", "ours N, --cuda-graph on"),
    ("multipliers", "ours, multipliers (C)"),
    ("multipliers_aten_lrm", "ours C, --lrm-kernel aten"),
    ("multipliers_graph", "ours C, --cuda-graph on"),
    ("gaugefix_B", "ours, GaugeFix every step (B)"),
    ("torchrun", "ours C under torchrun, one rank"),
]
# (row, its twin, step-1 rule): "bit" = the step-1 losses equal bit for bit, a number = |difference| within it.
# Every twin's losses at the last step (STEPS) agree within FINAL_TOL.
TWINS = [
    ("multipliers_aten_lrm", "multipliers", "bit"),  # the W_eff kernel equals ATen's products + cast bit for bit
    ("plain_graph", "plain", "bit"),                 # a replayed micro-step is the eager one
    ("multipliers_graph", "multipliers", "bit"),
    ("plain_aten_ln", "plain", 1e-3),                # the fused LayerNorm against ATen's
    ("plain_aten_ce", "plain", 2e-2),                # the fused loss: its parity row's bf16 tolerance
]
FINAL_TOL = 2e-2
STATUS = re.compile(r"^(\d+)s (\S+) (passed|FAILED|skipped)\b ?(.*)$")
TWIN = re.compile(r"^(\d+)s twin (\S+)=(\S+) (PASS|FAIL|NOT-COMPARED)\b ?(.*)$")
PRINTED = re.compile(r"^step (\d+)/\d+ \| loss (\S+) \|.*\| ([\d.]+) tok/s")


def kernels(stage):
    """The condition and the kernel flags of a row of ours (scripts/gpu-bench.sh passes these)."""
    with_multipliers = stage.startswith(("multipliers", "profile_multipliers", "torchrun"))
    cond = "B" if stage == "gaugefix_B" else "C" if with_multipliers else "N"
    ce = "aten" if stage.endswith("aten_ce") else "fused"
    ln = "aten" if stage.endswith("aten_ln") else "fused"
    lrm = "aten" if stage.endswith("aten_lrm") else "fused"
    graph = "on" if stage.endswith("_graph") else "off"
    return cond, ["--lm-head-kernel", ce, "--ln-kernel", ln, "--lrm-kernel", lrm, "--cuda-graph", graph]


def ours(work, stage):
    """{step: (loss, tokens_per_s)}, peak memory (GB or None), the source's name; ({}, None, why) when nothing."""
    log, txt = f"{work}/ours_{stage}/log.h5", f"{work}/ours_{stage}.txt"
    if os.path.exists(log):
        try:
            import h5py

            with h5py.File(log, "r") as f:
                steps = [int(s) for s in f["series/step"][:]]
                loss = [float(v) for v in f["series/loss"][:]]
                tps = [float(v) for v in f["series/tokens_per_s"][:]]
                attrs = f["summary"].attrs if "summary" in f else {}
                mem = float(attrs["peak_mem_gb"]) if "peak_mem_gb" in attrs else math.nan
            return dict(zip(steps, zip(loss, tps))), (mem if mem == mem else None), "log.h5"
        except Exception:  # no h5py, or a log its writer never closed: the printed lines
            pass
    rows = {}
    if os.path.exists(txt):
        for line in open(txt, errors="replace"):
            m = PRINTED.match(line)
            if m:
                rows[int(m.group(1))] = (float(m.group(2)), float(m.group(3)))
    return rows, None, "printed lines" if rows else "nothing logged"


def peer(work, stage):
    """The peer's JSON line, or None."""
    try:
        return json.loads(open(f"{work}/{stage}.json").read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        return None


def timed_window(steps):
    return range(3, steps) if steps > 4 else range(1, steps + 1)  # steps 3..STEPS-1: warm-up and the last left out


def measure(work, stage, steps):
    """tokens/s, {step: loss} at steps 1, 5, STEPS, peak GB, a note; tokens/s is None when nothing ran."""
    marks = sorted({1, min(5, steps), steps})
    if stage.startswith("peer_"):
        j = peer(work, stage)
        if j is None:
            return None, {}, None, "no JSON line"
        losses = j.get("losses") or [j["first_loss"]]
        return (j["tokens_per_s"], {s: losses[s - 1] for s in marks if s <= len(losses)}, j.get("peak_mem_gb"),
                f"mean of {steps} timed steps, data {os.path.basename(str(j.get('data', 'random')))}")
    rows, mem, source = ours(work, stage)
    if not rows:
        return None, {}, None, source
    window = [rows[s][1] for s in timed_window(steps) if s in rows]
    tps = statistics.median(window) if window else None
    return tps, {s: rows[s][0] for s in marks if s in rows}, mem, f"median of steps {timed_window(steps)[0]}-" \
        f"{timed_window(steps)[-1]} ({len(window)} logged), {source}"


def fmt_losses(losses):
    return ", ".join(f"{v:.4f} @{s}" for s, v in sorted(losses.items())) or "no loss"


def row_text(work, stage, steps):
    if stage == "fit":
        lines = [ln.strip() for ln in open(f"{work}/ours_fit.txt", errors="replace") if ln.startswith("fitted ")] \
            if os.path.exists(f"{work}/ours_fit.txt") else []
        return (lines[-1], 0) if lines else ("no 'fitted' line", 1)
    tps, losses, mem, note = measure(work, stage, steps)
    if tps is None and not losses:
        return note, 1
    text = (f"{tps:,.0f} tok/s" if tps is not None else "no timed step") + f" ({note}); loss {fmt_losses(losses)}"
    return text + (f"; peak {mem:.1f} GB" if mem is not None else ""), 0


def twin_text(work, a, b, steps):
    rule = next(r for x, y, r in TWINS if (x, y) == (a, b))
    ra, _, sa = ours(work, a)
    rb, _, sb = ours(work, b)
    for name, rows in ((a, ra), (b, rb)):
        if 1 not in rows:
            return f"NOT-COMPARED {name} logged no step", 2
    l1a, l1b = ra[1][0], rb[1][0]
    parts, ok = [], True
    if rule == "bit":
        if "log.h5" not in (sa, sb) or sa != sb:
            return f"NOT-COMPARED step-1 bit-equality needs both log.h5 files (read: {sa}, {sb})", 2
        same = l1a == l1b
        ok &= same
        parts.append(f"step 1 {'bit-equal' if same else 'NOT bit-equal'} ({l1a!r} vs {l1b!r})")
    else:
        d = abs(l1a - l1b)
        ok &= d <= rule
        parts.append(f"step 1 |diff| {d:.3g} {'<=' if d <= rule else '>'} {rule:g} ({l1a!r} vs {l1b!r})")
    if steps in ra and steps in rb:
        d = abs(ra[steps][0] - rb[steps][0])
        ok &= d <= FINAL_TOL
        parts.append(f"step {steps} |diff| {d:.3g} {'<=' if d <= FINAL_TOL else '>'} {FINAL_TOL:g}")
    else:
        ok = False
        parts.append(f"step {steps} not logged by both")
    return ("PASS " if ok else "FAIL ") + "; ".join(parts), 0 if ok else 1


def statuses(work):
    """{stage: (status, text)} (the last line about each stage) and {(a, b): twin line} from WORK/summary.txt."""
    st, tw = {}, {}
    try:
        lines = open(f"{work}/summary.txt", errors="replace").read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        m = STATUS.match(line)
        if m:
            st[m.group(2)] = (m.group(3), m.group(4))
        m = TWIN.match(line)
        if m:
            tw[(m.group(2), m.group(3))] = line.split(" ", 1)[1]
    return st, tw


def table(work, device, peak, steps):
    st, tw = statuses(work)
    fpt = next((j["flops_per_token"] for j in (peer(work, s) for s in ("peer_compile", "peer_eager")) if j), None)
    base = measure(work, "peer_compile", steps)[0] if st.get("peer_compile", ("",))[0] == "passed" else None
    marks = sorted({1, min(5, steps), steps})
    out = [f"| {device} | tokens/s | vs nanoGPT+compile | MFU (peak {peak:g} TFLOP/s) | peak GB | "
           + " | ".join(f"loss @{s}" for s in marks) + " | outcome |",
           "|---" * (6 + len(marks)) + "|"]
    for stage, label in ROWS:
        if stage not in st:
            continue
        status, why = st[stage]
        if status == "skipped":
            out.append(f"| {label} | - | - | - | - | " + " | ".join("-" for _ in marks) + f" | not run {why} |")
            continue
        tps, losses, mem, _ = measure(work, stage, steps)
        cells = [f"{tps:,.0f}" if tps else "-",
                 f"{tps / base:.2f}x" if tps and base else "-",
                 f"{100 * fpt * tps / (peak * 1e12):.1f} %" if tps and fpt else "-",
                 f"{mem:.1f}" if mem is not None else "-"]
        cells += [f"{losses[s]:.4f}" if s in losses else "-" for s in marks]
        outcome = "ok" if status == "passed" else f"**dead** {why}"
        out.append(f"| {label} | " + " | ".join(cells) + f" | {outcome} |")
    out.append("")
    out.append(f"Ours: median per-step tokens/s of steps 3..{steps - 1} (log.h5; else the printed running mean); "
               "peers: mean over the timed steps. Both read the same token windows (nanogpt_ref.py --data). MFU: "
               + (f"6N + 12·L·d·T = {fpt:.4g} FLOPs per token (nanoGPT's count), the same for every row."
                  if fpt else "no peer ran (its FLOPs count is the table's)."))
    if tw:
        out += ["", "Twin checks (step-1 loss, and the last step's within "
                f"{FINAL_TOL:g}):", ""] + [f"- {v}" for v in tw.values()]
    return "\n".join(out)


# The out-of-memory contract (issue 45): a micro-batch far past the device's memory ends the run with exit 1 and one
# error line that names the sizes and the flag to lower; no traceback, abort or raw CUDA error beside it. On a card
# the allocation fails (train/micro_batch.cpp out_of_memory_error); on a CPU the activation estimate refuses it
# before anything is allocated (check_activation_memory), since there the kernel's OOM killer would end the process.
ERROR_LINE = re.compile(r"^gaugelab(?:-torch)? train: error: ")
NOT_ONE_LINE = re.compile(r"Traceback|terminate called|Aborted|core dumped|Segmentation fault|^CUDA error|"
                          r"^RuntimeError")


def oom_text(text, device, status):
    """(the row's reason, whether it met the contract) for a run's output `text` and exit `status`."""
    errors = [ln for ln in text.splitlines() if ERROR_LINE.match(ln)]
    said = errors[-1][:200] if errors else "no error line"
    if status == 0:
        return "exit 0: it trained, no out-of-memory seen", False
    if status != 1:
        return f"exit {status}, not 1: {said}", False
    if len(errors) != 1:
        return f"{len(errors)} error lines, not 1: {said}", False
    bad = [ln for ln in text.splitlines() if NOT_ONE_LINE.search(ln)]
    if bad:
        return f"beside the error line: {bad[0][:120]}", False
    names = "out of memory on cuda" if device == "cuda" else "needs about"
    if names not in errors[0] or "--batch-size" not in errors[0]:
        return f"the line does not say {names!r} and name --batch-size: {said}", False
    return said, True


def main(argv):
    verbs = ("flags", "twins", "row", "twin", "table", "oom")
    if (not argv or argv[0] not in verbs or (len(argv) < 2 and argv[0] != "twins")
            or (argv[0] == "oom" and (len(argv) != 4 or not argv[3].lstrip("-").isdigit()))):
        print(__doc__, file=sys.stderr)
        return 2
    verb, work = argv[0], argv[1] if len(argv) > 1 else ""
    if verb == "twins":
        text, rc = "\n".join(f"{a} {b}" for a, b, _ in TWINS), 0
    elif verb == "flags":
        cond, flags = kernels(argv[1])
        text, rc = " ".join([cond] + flags), 0
    elif verb == "row":
        text, rc = row_text(work, argv[2], int(argv[3]))
    elif verb == "twin":
        text, rc = twin_text(work, argv[2], argv[3], int(argv[4]))
    elif verb == "oom":
        with open(argv[1], errors="replace") as f:
            text, ok = oom_text(f.read(), argv[2], int(argv[3]))
        rc = 0 if ok else 1
    else:
        text, rc = table(work, argv[2], float(argv[3]), int(argv[4])), 0
    print(text)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
