#!/usr/bin/env python3
"""Random encoder-disaggregation (E/P/D) runs on blis (--profile-set head)
and on HEAD (f90a1e3a), stdout compared byte for byte (docs/testing.md,
"Differential testing"; docs/epd.md).

    tests/differential/random_epd_vs_reference.py --reference PATH --run-dir DIR
        [--count N] [--seed S] [--blis build/stage/bin/blis] [-v] [--keep DIR]

Each configuration draws a workload of one to three clients, some
multimodal (images, audio or video per request, sometimes none), P/D pools
(prefill, decode, prefill-decode), an encode pool of one to three instances
and its decider (never, always, multimodal), the P/D decider and the
routing (round-robin moves with every encode choice; weighted scorers with
prefix-affinity remember them). --num-instances is the pools' sum (blis
refuses idle instances beyond the pools: docs/differences.md). Now and then
a configuration HEAD refuses: a decider without an encode pool, an encode
pool without P/D pools. A configuration is "same" (identical stdout),
"refused" (both exit non-zero, blis with exit 2 and one error line),
"routing" or "differs". "routing": blis's P/D already prints other figures
than HEAD when a request is split (HEAD counts the prefill sub-request as a
completion of the prefill instance, and its timings differ: the same run
without the encode pool differs too, which is checked), so the comparison
is then of what the encode stage changes, the routing: every instance's
completed and injected requests (a prefill-only instance aside), the
cluster's, and the PD block's "Disaggregated Requests". "pd-baseline": not
even that, but the same run without the encode pool already routes
otherwise (load-aware routing follows the other timings). Not run by CI: a
fresh machine has no reference build.
"""
import json
import os
import random
import re
import sys

import head_pair


def dist(kind, mean):
    if kind == "constant":
        return "{type: constant, params: {value: %d}}" % mean
    return "{type: gaussian, params: {mean: %d, std_dev: %d, min: 1, max: %d}}" % (mean, max(mean // 4, 1), 4 * mean)


def draw_spec(rng):
    n = rng.choice([1, 2, 2, 3])
    lines = ['version: "2"', f"seed: {rng.randrange(1000)}", f"aggregate_rate: {rng.choice([5, 20, 50, 200])}",
             f"num_requests: {rng.choice([30, 80, 150])}", "clients:"]
    for i in range(n):
        lines += [f"  - id: c{i}", f"    rate_fraction: {round(1.0 / n, 3)}",
                  "    arrival: {process: %s}" % rng.choice(["poisson", "constant", "gamma, cv: 2.0"])]
        m = rng.choice([64, 256, 1024])
        lines.append("    input_distribution: " + dist("gaussian", m))
        if rng.random() < 0.7:
            lines.append("    multimodal:")
            lines.append("      text_distribution: " + dist("gaussian", rng.choice([32, 128, 512])))
            for media in ["image", "audio", "video"]:
                if rng.random() < 0.6:
                    lines.append(f"      {media}_distribution: " + dist(rng.choice(["constant", "gaussian"]),
                                                                         rng.choice([64, 256, 576])))
                    lines.append(f"      {media}_count_distribution: " + dist("constant", rng.choice([0, 1, 1, 2])))
        lines.append("    output_distribution: {type: exponential, params: {mean: %d}}" % rng.choice([16, 64, 200]))
    return "\n".join(lines) + "\n"


def draw_flags(rng):
    p, d, s = rng.choice([(1, 1, 0), (1, 2, 0), (2, 1, 0), (2, 2, 0), (1, 1, 1), (0, 0, 2), (1, 2, 1)])
    e = rng.choice([1, 1, 2, 3])
    decider = rng.choice(["always", "multimodal", "multimodal", "never"])
    a = ["--seed", str(rng.randrange(100))]
    r = rng.random()
    if r < 0.04:  # refused: a decider without an encode pool
        e = 0
        decider = rng.choice(["always", "multimodal"])
    elif r < 0.08:  # refused: an encode pool without P/D pools
        p = d = s = 0
    if p:
        a += ["--prefill-instances", str(p)]
    if d:
        a += ["--decode-instances", str(d)]
    if s:
        a += ["--prefill-decode-instances", str(s)]
    if e:
        a += ["--encode-instances", str(e)]
    a += ["--num-instances", str(max(p + d + s + e, 1)), "--encode-decider", decider]
    if p:
        a += ["--pd-decider", rng.choice(["always", "always", "never", "prefix-threshold"])]
    routing = rng.choice(["round-robin", "round-robin", "least-loaded", "weighted"])
    a += ["--routing-policy", routing]
    if routing == "weighted" and rng.random() < 0.7:
        a += ["--routing-scorers", rng.choice(["queue-depth:1", "prefix-affinity:3,queue-depth:2,kv-utilization:2",
                                               "prefix-affinity:1"])]
    if rng.random() < 0.2:
        a += ["--max-num-seqs", str(rng.choice([4, 16]))]
    if rng.random() < 0.2:
        a += ["--routing-latency", str(rng.choice([0, 1000]))]
    if rng.random() < 0.2:
        a += ["--latency-model", "trained-physics"]
    return a


def blocks(out):
    """The metrics blocks by instance id, and the PD block's disaggregated count."""
    found = {}
    for text in re.findall(r"\{[^{}]*\}", out):
        try:
            b = json.loads(text)
        except ValueError:
            continue
        if "instance_id" in b:
            found[b["instance_id"]] = (b.get("completed_requests"), b.get("injected_requests"))
    m = re.search(r"Disaggregated Requests: (\d+)", out)
    return found, m.group(1) if m else None


def same_routing(ref, ours, prefill_only):
    (a, da), (b, db) = blocks(ref), blocks(ours)
    if da != db or set(a) != set(b) or not a:
        return False
    for k in a:
        if k.startswith("instance_") and int(k.split("_")[1]) < prefill_only:
            continue
        if a[k] != b[k]:
            return False
    return True


def without_encode(cmd):
    out, skip = [], False
    e = 0
    for i, x in enumerate(cmd):
        if skip:
            skip = False
            continue
        if x in ("--encode-instances", "--encode-decider"):
            if x == "--encode-instances":
                e = int(cmd[i + 1])
            skip = True
            continue
        out.append(x)
    n = out.index("--num-instances")
    out[n + 1] = str(int(out[n + 1]) - e)
    return out


def main():
    args = head_pair.arguments(count=60, keep="write the workload specs here (and keep them)")
    rng = random.Random(args.seed)
    counts = {"same": 0, "routing": 0, "pd-baseline": 0, "refused": 0, "differs": 0}
    with head_pair.scratch(args) as tmp:
        for i in range(args.count):
            text = draw_spec(rng)
            spec = head_pair.write(os.path.join(tmp, f"w{i}.yaml"), text)
            cmd = ["run", "--model", "qwen/qwen3-14b", "--workload-spec", spec] + draw_flags(rng)
            ref, ours = head_pair.head(args, cmd), head_pair.blis(args, cmd)
            if ref.returncode != 0 and ours.returncode != 0:
                kind = "refused" if head_pair.refused_cleanly(ours) else "differs"
            elif ref.returncode == 0 and ours.returncode == 0 and ref.stdout == ours.stdout:
                kind = "same"
            elif ref.returncode == 0 and ours.returncode == 0:
                p = int(cmd[cmd.index("--prefill-instances") + 1]) if "--prefill-instances" in cmd else 0
                base = without_encode(cmd)
                ref0, ours0 = head_pair.head(args, base), head_pair.blis(args, base)
                known = ref0.stdout != ours0.stdout  # P/D differs without the encode pool too
                if known and same_routing(ref.stdout, ours.stdout, p):
                    kind = "routing"
                elif known and not same_routing(ref0.stdout, ours0.stdout, p):
                    kind = "pd-baseline"  # load-aware routing follows P/D's other timings, encode pool or not
                else:
                    kind = "differs"
            else:
                kind = "differs"
            counts[kind] += 1
            if kind == "differs" or args.v:
                print(kind, " ".join(cmd))
                if kind == "differs":
                    print(text)
                    print("   exit reference", ref.returncode, "blis", ours.returncode)
                    print("   blis stderr:", ours.stderr[-1000:])
    print(head_pair.summary(counts))
    return 0 if counts["differs"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
