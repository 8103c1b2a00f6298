#!/usr/bin/env python3
"""Random expert-parallel runs on blis (--profile-set head) and on HEAD
(f90a1e3a), stdout compared byte for byte (docs/testing.md, "Differential
testing"; docs/epd.md).

    tests/differential/random_expert_parallel_vs_reference.py --reference PATH --run-dir DIR
        [--count N] [--seed S] [--blis build/stage/bin/blis] [-v]

Each configuration draws a MoE model (now and then a dense one, which both
must refuse with --enable-expert-parallel), the trained-physics latency model
(now and then roofline, refused by both), --enable-expert-parallel, --dp,
--tp, sometimes --moe-comm-backend, instances, routing and a workload. A
configuration is "same" (identical stdout), "refused" (both exit non-zero,
blis with exit 2, nothing on stdout and one error line), "without-ep" (the
outputs differ, but each binary prints the same with and without
--enable-expert-parallel: a difference the flag has no part in, such as
the preemption rows of docs/differences.md) or "differs". Not run by CI: a
fresh machine has no reference build.
"""
import os
import random
import sys

import head_pair

MOE = ["redhatai/llama-4-scout-17b-16e-instruct-fp8-dynamic", "qwen/qwen3-30b-a3b", "mistralai/mixtral-8x7b-v0.1"]
DENSE = ["qwen/qwen3-14b", "meta-llama/llama-3.1-8b-instruct"]
BACKENDS = ["naive", "allgather_reducescatter", "pplx", "deepep_high_throughput", "deepep_low_latency", "mori",
            "flashinfer_all2allv"]


def draw(rng):
    model = rng.choice(DENSE) if rng.random() < 0.1 else rng.choice(MOE)
    a = ["run", "--model", model, "--seed", str(rng.randrange(1000)),
         "--rate", str(rng.choice([2, 5, 10, 20, 50])), "--num-requests", str(rng.choice([20, 50, 100]))]
    a += ["--latency-model", "roofline" if rng.random() < 0.08 else "trained-physics"]
    if rng.random() < 0.9:
        a += ["--enable-expert-parallel"]
    if rng.random() < 0.6:
        a += ["--dp", str(rng.choice([1, 2, 4, 8]))]
    # No defaults for these models in either table: a GPU and a TP their weights fit.
    a += ["--hardware", rng.choice(["H100", "H100", "A100-80"]),
          "--tp", str(rng.choice([1, 2, 4] if "qwen3-30b" in model or model in DENSE else [2, 4, 8]))]
    if rng.random() < 0.3:
        a += ["--moe-comm-backend", rng.choice(BACKENDS)]
    if rng.random() < 0.5:
        a += ["--num-instances", str(rng.randint(1, 4)),
              "--routing-policy", rng.choice(["round-robin", "least-loaded", "weighted"])]
    if rng.random() < 0.4:
        a += ["--prompt-tokens", str(rng.choice([64, 512, 2048])), "--output-tokens", str(rng.choice([16, 128, 512]))]
    if rng.random() < 0.3:
        a += ["--max-num-seqs", str(rng.choice([4, 16, 64, 256]))]
    if rng.random() < 0.2:
        a += ["--total-kv-blocks", str(rng.choice([2000, 20000]))]
    return a


def main():
    o = head_pair.arguments(count=60, timeout=300)
    rng = random.Random(o.seed)
    counts = {"same": 0, "refused": 0, "without-ep": 0, "differs": 0}
    for _ in range(o.count):
        args = draw(rng)
        ref, mine = head_pair.head(o, args, timeout=o.timeout), head_pair.blis(o, args)
        if ref.returncode != 0 and mine.returncode != 0:
            kind = "refused" if head_pair.refused_cleanly(mine) else "differs"
        elif ref.returncode == 0 and mine.returncode == 0 and ref.stdout == mine.stdout:
            kind = "same"
        elif ref.returncode == 0 and mine.returncode == 0 and "--enable-expert-parallel" in args:
            plain = [x for x in args if x != "--enable-expert-parallel"]
            ref0, mine0 = head_pair.head(o, plain, timeout=o.timeout), head_pair.blis(o, plain)
            kind = "without-ep" if ref0.stdout == ref.stdout and mine0.stdout == mine.stdout else "differs"
        else:
            kind = "differs"
        counts[kind] += 1
        if kind == "differs" or o.v:
            print(kind, " ".join(args))
            if kind != "same":
                print("   exit reference", ref.returncode, "blis", mine.returncode)
                print("   reference stderr:", ref.stderr.strip().splitlines()[-1:] if ref.returncode else "")
                print("   blis stderr:", mine.stderr.strip()[-300:])
    print(head_pair.summary(counts))
    return 0 if counts["differs"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
