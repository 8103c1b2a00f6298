#!/usr/bin/env python3
"""Random gateway flow-control runs on blis (--profile-set head) and on HEAD
(f90a1e3a), stdout compared byte for byte (docs/testing.md, "Differential
testing"; docs/gateway.md).

    tests/differential/random_gateway_vs_reference.py --reference PATH --run-dir DIR
        [--count N] [--seed S] [--blis build/stage/bin/blis] [-v] [--keep DIR]

Each configuration draws a workload of one to three clients (SLO classes
across the priority bands, tenants or none), instances, and the flow
control: --flow-control with a saturation detector (never, utilization,
concurrency) and its thresholds, a dispatch order (priority, slo-deadline
with --slo-targets; fifo only where HEAD's fifo is fifo: one band and
global-strict fairness, docs/differences.md), queue depth, per-band
capacity, usage limit, fairness, shedding, in-flight eviction, TTL, tick; and sometimes no flow
control with the admission policies tier-shed or gaie-legacy instead. A
configuration is "same" (identical stdout), "known" (with a horizon,
differing only in the counts of requests cut by it, as runs without flow
control: issue 25; or with P/D, a request split into a prefill and a decode:
row 51) or "differs"; a "same" one whose --metrics-path files (a record per
request, with its gateway_queue_delay_ms) are not identical is "file-differs".
One configuration in four runs P/D pools (decider never, always or
prefix-threshold) behind the gateway. Not run by CI: a fresh machine has no
reference build.
"""
import os
import random
import re

import head_pair

KNOWN = ("total_output_tokens", "tokens_per_sec", "vllm_estimated_duration_s", "responses_per_sec",
         "still_queued", "injected_requests")
PRIORITY = {"critical": 4, "standard": 3, "": 3, "batch": -1, "sheddable": -2, "background": -3}


def draw_spec(rng):
    n = rng.choice([1, 1, 2, 3])
    classes = [rng.choice(["critical", "standard", "sheddable", "batch", "background", ""]) for _ in range(n)]
    if any(classes):  # HEAD refuses a spec where some clients name a class and others not
        classes = [c or "standard" for c in classes]
    lines = ['version: "2"', f"seed: {rng.randrange(1000)}", f"aggregate_rate: {rng.choice([20, 100, 300, 1000])}",
             f"num_requests: {rng.choice([100, 300])}", "clients:"]
    for i, slo in enumerate(classes):
        lines += [f"  - id: c{i}", f"    rate_fraction: {round(1.0 / n, 3)}"]
        if slo:
            lines.append(f"    slo_class: {slo}")
        if rng.random() < 0.6:
            lines.append(f"    tenant_id: t{rng.randint(1, 3)}")
        lines.append("    arrival: {process: %s}" % rng.choice(["poisson", "constant", "gamma, cv: 2.0"]))
        m = rng.choice([64, 256, 1024])
        lines.append("    input_distribution: {type: gaussian, params: {mean: %d, std_dev: %d, min: 8, max: %d}}"
                     % (m, m // 4, 4 * m))
        o = rng.choice([16, 64, 200])
        lines.append("    output_distribution: {type: exponential, params: {mean: %d}}" % o)
    return "\n".join(lines) + "\n", classes


def draw_topology(rng):
    """Instances, and one time in four P/D pools (a prefill and a decode pool, sometimes a shared one)."""
    if rng.random() >= 0.25:
        return ["--num-instances", str(rng.randint(1, 4))]
    p, d, pd = rng.randint(1, 2), rng.randint(1, 2), rng.choice([0, 0, 1])
    a = ["--num-instances", str(p + d + pd), "--prefill-instances", str(p), "--decode-instances", str(d)]
    if pd:
        a += ["--prefill-decode-instances", str(pd)]
    return a + ["--pd-decider", rng.choice(["never", "always", "prefix-threshold"])]


def draw_flags(rng, classes):
    a = draw_topology(rng) + ["--seed", str(rng.randrange(100))]
    if rng.random() < 0.2:
        a += ["--max-num-seqs", str(rng.choice([4, 16]))]
    if rng.random() < 0.2:
        a += ["--routing-policy", rng.choice(["least-loaded", "weighted"])]
    if rng.random() < 0.15:
        a += ["--horizon", str(rng.choice([1_000_000, 3_000_000]))]
    if rng.random() < 0.15:
        a += ["--admission-latency", str(rng.choice([0, 500, 2000])),
              "--routing-latency", str(rng.choice([0, 1000]))]
    if rng.random() < 0.15:
        return a + ["--admission-policy", rng.choice(["tier-shed", "gaie-legacy"])]
    a += ["--flow-control"]
    det = rng.choice(["never", "utilization", "concurrency", "concurrency"])
    a += ["--saturation-detector", det]
    if det == "concurrency":
        a += ["--max-concurrency", str(rng.choice([1, 2, 4, 8, 32]))]
    if det == "utilization":
        a += ["--queue-depth-threshold", str(rng.choice([0.5, 1, 2, 5])),
              "--kv-cache-util-threshold", str(rng.choice([0.05, 0.3, 0.8]))]
    fairness = rng.choice(["global-strict", "round-robin"])
    one_band = len({PRIORITY[c] for c in classes}) == 1
    orders = ["priority", "slo-deadline"] + (["fifo"] if one_band and fairness == "global-strict" else [])
    order = rng.choice(orders)
    a += ["--dispatch-order", order, "--fairness-policy", fairness]
    if order == "slo-deadline" and rng.random() < 0.8:
        named = sorted({c for c in classes if c})
        if named:
            a += ["--slo-targets", ",".join(f"{c}={rng.choice([50000, 200000, 1000000])}" for c in named)]
    if rng.random() < 0.5:
        a += ["--max-gateway-queue-depth", str(rng.choice([3, 10, 40]))]
        if rng.random() < 0.5:
            a += ["--queue-shedding"]
    if rng.random() < 0.3:
        a += ["--per-band-capacity", str(rng.choice([2, 10, 30]))]
    if rng.random() < 0.3:
        a += ["--usage-limit-threshold", str(rng.choice([0.3, 0.5, 0.9]))]
    if rng.random() < 0.4:
        a += ["--request-ttl", str(rng.choice([20000, 200000, 1000000]))]
    if rng.random() < 0.3:
        a += ["--dispatch-tick-interval", str(rng.choice([0, 100, 5000]))]
    if rng.random() < 0.3:
        a += ["--in-flight-eviction"]
    return a


def classify(ref, ours, horizon):
    if ref == ours:
        return "same"
    if re.search(r"^Disaggregated Requests: [1-9]", ref, re.M):
        return "known"  # differences.md row 51: HEAD's KV transfer and decode steps of a split request
    a, b = ref.splitlines(), ours.splitlines()
    if not horizon or len(a) != len(b):
        return "differs"
    for x, y in zip(a, b):
        metric_line = x.startswith('  "') and y.startswith('  "')
        if x != y and not any(f'"{k}"' in x for k in KNOWN) and not metric_line:
            return "differs"
    return "known"


def read(path):
    """The file's text, or None when it was not written."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


def main():
    args = head_pair.arguments(count=50, keep="write the workload specs here (and keep them)")
    rng = random.Random(args.seed)
    counts = {"same": 0, "known": 0, "differs": 0, "file-differs": 0, "refused": 0}
    with head_pair.scratch(args) as tmp:
        for i in range(args.count):
            text, classes = draw_spec(rng)
            spec = head_pair.write(os.path.join(tmp, f"w{i}.yaml"), text)
            cmd = ["run", "--model", "qwen/qwen3-14b", "--workload-spec", spec] + draw_flags(rng, classes)
            files = [os.path.join(tmp, f"m{i}-{who}.json") for who in ("ref", "ours")]
            ref = head_pair.head(args, cmd + ["--metrics-path", files[0]])
            ours = head_pair.blis(args, cmd + ["--metrics-path", files[1]])
            if ref.returncode != 0 or ours.returncode != 0:
                kind = "refused" if ref.returncode != 0 and ours.returncode != 0 else "differs"
            else:
                kind = classify(ref.stdout, ours.stdout, "--horizon" in cmd)
                if kind == "same" and read(files[0]) != read(files[1]):
                    kind = "file-differs"
            counts[kind] += 1
            if kind in ("differs", "file-differs") or args.v:
                print(kind, " ".join(cmd))
                if kind != "same":
                    print(text)
                    if ours.returncode != 0:
                        print(ours.stderr[-2000:])
    print(head_pair.summary(counts))


if __name__ == "__main__":
    main()
