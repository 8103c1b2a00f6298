#!/usr/bin/env python3
"""Random --kv-cpu-blocks runs on blis (--profile-set head, so --kv-cpu-model
mirror) and on HEAD (f90a1e3a, sim/kv/tiered.go), stdout compared byte for
byte (docs/testing.md, "Differential testing").

    tests/differential/random_cpu_tier_vs_reference.py --reference PATH --run-dir DIR
        [--count N] [--seed S] [--blis build/stage/bin/blis] [-v] [--keep DIR]

Each configuration draws a workload of one to three prefix groups (so that
prompt blocks evicted from the GPU come back from the CPU tier), a GPU cache
from tight to roomy, a CPU tier from a few blocks to many, the transfer
bandwidth and base latency, and sometimes several instances, chunked
prefill or a small batch. A configuration is "same" (identical stdout),
"refused" (both exit non-zero), "hang" (HEAD did not finish within
--timeout seconds; blis did), "explained" (it differs as a row of
docs/differences.md says, from the runs' debug logs: rows 6, 44 and 55, as
random_kv_offload_vs_reference.py tells them) or "differs". Not run by CI: a fresh machine
has no reference build.
"""
import os
import random

import head_pair
from random_kv_offload_vs_reference import explained


def draw_flags(rng):
    a = ["--total-kv-blocks", str(rng.choice([150, 250, 400, 800, 3000])), "--seed", str(rng.randrange(100)),
         "--kv-cpu-blocks", str(rng.choice([2, 10, 40, 150, 1000]))]
    if rng.random() < 0.5:
        a += ["--kv-transfer-bandwidth", str(rng.choice([0.5, 4.0, 100.0]))]
    if rng.random() < 0.4:
        a += ["--kv-transfer-base-latency", str(rng.choice([0, 10, 500]))]
    if rng.random() < 0.3:
        a += ["--kv-offload-threshold", str(rng.choice([0.3, 0.9]))]
    if rng.random() < 0.3:
        a += ["--num-instances", str(rng.choice([2, 3])), "--routing-policy",
              rng.choice(["round-robin", "least-loaded", "weighted"])]
    if rng.random() < 0.2:
        a += ["--long-prefill-token-threshold", str(rng.choice([256, 512]))]
    if rng.random() < 0.2:
        a += ["--max-num-seqs", str(rng.choice([2, 8]))]
    if rng.random() < 0.2:
        a += ["--latency-model", rng.choice(["roofline", "trained-physics"])]
    return a


def main():
    args = head_pair.arguments(count=50, keep="write the workload specs here (and keep them)", timeout=120)
    rng = random.Random(args.seed)
    counts = {"same": 0, "refused": 0, "hang": 0, "explained": 0, "differs": 0}
    with head_pair.scratch(args) as tmp:
        for i in range(args.count):
            spec = head_pair.write(os.path.join(tmp, f"w{i}.yaml"), head_pair.prefix_groups_spec(rng))
            cmd = ["run", "--model", "qwen/qwen3-14b", "--workload-spec", spec] + draw_flags(rng)
            kind, ours = head_pair.compare(args, cmd)
            why = explained(args, cmd) if kind == "differs" and ours.returncode == 0 else None
            if why:
                kind = "explained"
            counts[kind] += 1
            if kind != "same" or args.v:
                print(kind, i, " ".join(cmd), f"-- differences.md {why}" if why else "")
                if kind == "differs" and ours.returncode != 0:
                    print(ours.stderr[-2000:])
    print(head_pair.summary(counts))


if __name__ == "__main__":
    main()
