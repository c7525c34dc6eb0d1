#!/usr/bin/env python3
"""Ranks what a profiler trace spent its device time on: `gaugelab train --profile-from S` (OUT/profile.json)
and tests/reference/nanogpt_ref.py --profile-out FILE write the same Chrome trace format (kineto's), so ours
and the peers' profiles are read by one rule.

    scripts/trace_top.py TRACE.json [--top 15] [--steps N] [--title T]

Device events are those of categories kernel, gpu_memcpy and gpu_memset: their time summed per name, the
count, the share of all device time, and the device's busy time (the union of those intervals) against the
span from the first to the last (a device idle between launches shows as busy < span). A trace without
device events (the CPU) ranks the CPU operators by inclusive time instead (nested: shares overlap).
Markdown on stdout."""
import argparse
import json
import sys
from collections import defaultdict

DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def short(name, width=90):
    name = " ".join(name.split())
    return name if len(name) <= width else name[: width - 1] + "…"


def union_us(intervals):
    """Total length of the union of [start, end) intervals."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted(intervals):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0.0)


def rank(events, top, steps):
    dev = [e for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_CATS]
    kind = "device" if dev else "cpu_op"
    chosen = dev or [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    if not chosen:
        raise SystemExit("trace_top: no kernel, copy or CPU-operator event in the trace")
    per = defaultdict(lambda: [0.0, 0])
    for e in chosen:
        per[e["name"]][0] += float(e.get("dur", 0.0))
        per[e["name"]][1] += 1
    total = sum(v[0] for v in per.values())
    spans = [(float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0.0))) for e in chosen]
    span = max(e for _, e in spans) - min(s for s, _ in spans)
    busy = union_us(spans)
    lines = []
    if kind == "device":
        lines.append(f"device busy {busy / 1e3:.2f} ms of a {span / 1e3:.2f} ms span ({100 * busy / span:.1f} %), "
                     f"{len(chosen)} device events" + (f", {busy / 1e3 / steps:.2f} ms busy per step" if steps else ""))
    else:
        lines.append(f"no device events: CPU operators by inclusive time (nested, shares overlap), span {span / 1e3:.2f} ms")
    lines.append("")
    lines.append(f"| {kind} event | calls | total ms | share |")
    lines.append("|---|---|---|---|")
    for name, (us, n) in sorted(per.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"| {short(name).replace('|', '/')} | {n} | {us / 1e3:.3f} | {100 * us / total:.1f} % |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--steps", type=int, default=0, help="steps in the trace (for the per-step line)")
    ap.add_argument("--title", default="")
    a = ap.parse_args(argv)
    try:
        with open(a.trace) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"trace_top: cannot read {a.trace}: {e}")
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    if a.title:
        print(f"### {a.title}\n")
    print(rank(events, a.top, a.steps))


if __name__ == "__main__":
    sys.exit(main())
