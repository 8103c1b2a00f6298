#!/usr/bin/env python3
"""Random --kv-offload-config runs on blis (--profile-set head) and on HEAD
(f90a1e3a), stdout compared byte for byte (docs/testing.md, "Differential
testing"; docs/kv-offload.md).

    tests/differential/random_kv_offload_vs_reference.py --reference PATH --run-dir DIR
        [--count N] [--seed S] [--blis build/stage/bin/blis] [-v] [--keep DIR]

Each configuration draws a workload of one to three prefix groups (so that
evicted prompt blocks come back), a GPU cache from tight to roomy, and a
kv_offload: block: a CPU budget from a few blocks to many, prompt-only or
not, and zero to three fs secondary tiers (a device class or explicit
bandwidths and latency, direct I/O or not, thread counts). One in eight is
a broken file (unknown key, a tier without bandwidth, negative bytes...):
both must refuse it. A configuration is "same" (identical stdout),
"refused" (both exit non-zero), "hang" (HEAD did not finish within
--timeout seconds; blis did), "explained" (it differs as a row of
docs/differences.md says, from the runs' debug logs) or "differs". Not run
by CI: a fresh machine has no reference build.
"""
import os
import random
import re
import subprocess

import head_pair
from random_vs_reference import held_while_waiting

BLOCK_BYTES = 2621440  # qwen/qwen3-14b, TP 1, 16-token blocks
DEVICES = ["nvme_gen4", "nvme_gen3", "sata_ssd", "cpu_dram", "s3"]


def draw_tier(rng, i):
    t = ["    - type: fs", f"      root_dir: /mnt/t{i}", f"      direct_io: {rng.choice(['true', 'false'])}"]
    if rng.random() < 0.6:
        t.append(f"      device_class: {rng.choice(DEVICES)}")
        if rng.random() < 0.3:
            t.append(f"      read_bandwidth: {rng.choice([50.0, 500.0, 5000.0])}")
    else:
        t += [f"      read_bandwidth: {rng.choice([20.0, 200.0, 2000.0, 20000.0])}",
              f"      write_bandwidth: {rng.choice([20.0, 200.0, 2000.0, 20000.0])}",
              f"      base_latency: {rng.choice([0, 1, 80, 1000, 30000])}"]
    if rng.random() < 0.4:
        t.append(f"      n_read_threads: {rng.choice([1, 2, 4, 16])}")
    if rng.random() < 0.4:
        t.append(f"      n_write_threads: {rng.choice([1, 2, 4, 16])}")
    if rng.random() < 0.2:
        t.append(f"      locality: {rng.choice(['LOCAL', 'REMOTE'])}")
    return t


BROKEN = [
    "kv_offload:\n  cpu_bytes_to_use: -5\n",
    "kv_offload:\n  cpu_bytes_to_use: 100000000\n  colour: blue\n",
    "kv_offload:\n  cpu_bytes_to_use: 100000000\n  secondary_tiers:\n    - type: fs\n      root_dir: /x\n      direct_io: true\n",
    "kv_offload:\n  cpu_bytes_to_use: 100000000\n  secondary_tiers:\n    - type: obj\n      root_dir: /x\n      direct_io: true\n      device_class: s3\n",
    "kv_offload:\n  block_size: 16\n",
    "kv_offload:\n  cpu_bytes_to_use: 100000000\n  secondary_tiers:\n    - type: fs\n      root_dir: /x\n      device_class: s3\n",
    "kv_offload:\n  cpu_bytes_to_use: 100000000\n  secondary_tiers:\n    - type: fs\n      root_dir: /x\n      direct_io: true\n      device_class: tape\n",
    "kv_offload:\n  cpu_bytes_to_use: 100000000\n  block_size: 24\n",
    "kv_offload:\n  cpu_bytes_to_use: 1000\n",
    "other: 1\n",
]


def draw_offload(rng):
    if rng.random() < 0.125:
        return rng.choice(BROKEN)
    lines = ["kv_offload:", f"  cpu_bytes_to_use: {BLOCK_BYTES * rng.choice([2, 10, 40, 150, 1000]) + rng.randrange(BLOCK_BYTES)}"]
    if rng.random() < 0.4:
        lines.append(f"  offload_prompt_only: {rng.choice(['true', 'false'])}")
    if rng.random() < 0.2:
        lines.append("  eviction_policy: lru")
    if rng.random() < 0.2:
        lines.append(rng.choice(["  block_size: 16", "  blocks_per_chunk: 1", "  tokens_per_hash: 16"]))
    tiers = rng.choice([0, 1, 1, 1, 2, 3])
    if tiers:
        lines.append("  secondary_tiers:")
        for i in range(tiers):
            lines += draw_tier(rng, i)
    return "\n".join(lines) + "\n"


def draw_flags(rng):
    a = ["--total-kv-blocks", str(rng.choice([150, 250, 400, 800, 3000])), "--seed", str(rng.randrange(100))]
    if rng.random() < 0.3:
        a += ["--num-instances", str(rng.choice([2, 3]))]
    if rng.random() < 0.2:
        a += ["--long-prefill-token-threshold", str(rng.choice([256, 512]))]
    if rng.random() < 0.2:
        a += ["--max-num-seqs", str(rng.choice([2, 8]))]
    return a


# Row 6: HEAD admits a prompt whose every block is cached, a whole number of
# blocks (a preempted request coming back), with no work and no blocks.
ZERO_WORK = re.compile(r"Num Inputs: (\d+), startIndex = \1, endIndex = \1\"")
# Row 54: a CPU reload in blis passed over free GPU blocks holding the
# prompt's own content, which HEAD reuses (up to the first such reload both
# runs are the same, so HEAD reused them there).
OWN_KEPT = re.compile(r"a CPU reload passed over (\d+) free GPU blocks")


def explained(args, cmd):
    """The rows of docs/differences.md that explain a difference (row 44: a
    request waits holding reloaded blocks, which HEAD's log shows as in
    random_vs_reference.py), or None."""
    why = []
    log = head_pair.head(args, cmd + ["--log", "debug"], timeout=args.timeout).stderr
    n = len(ZERO_WORK.findall(log))
    if n:
        why.append(f"row 6 ({n} fully cached prompts admitted with no work)")
    n = held_while_waiting(log)
    if n:
        why.append(f"row 44 ({n} waiting requests holding reloaded blocks)")
    log = head_pair.blis(args, cmd + ["--log", "debug"]).stderr
    n = len(OWN_KEPT.findall(log))
    if n:
        why.append(f"row 55 ({n} CPU reloads find the reloading prompt's own blocks least recently freed)")
    return ", ".join(why) or None


def main():
    args = head_pair.arguments(count=50, keep="write the workload specs and offload files here (and keep them)",
                               timeout=120)
    rng = random.Random(args.seed)
    counts = {"same": 0, "refused": 0, "hang": 0, "explained": 0, "differs": 0}
    with head_pair.scratch(args) as tmp:
        for i in range(args.count):
            text, offload = head_pair.prefix_groups_spec(rng), draw_offload(rng)
            spec = head_pair.write(os.path.join(tmp, f"w{i}.yaml"), text)
            off = head_pair.write(os.path.join(tmp, f"o{i}.yaml"), offload)
            cmd = ["run", "--model", "qwen/qwen3-14b", "--workload-spec", spec, "--kv-offload-config", off] + \
                draw_flags(rng)
            kind, ours = head_pair.compare(args, cmd)
            why = explained(args, cmd) if kind == "differs" and ours.returncode == 0 else None
            if why:
                kind = "explained"
            counts[kind] += 1
            if kind != "same" or args.v:
                print(kind, i, " ".join(cmd), f"-- differences.md {why}" if why else "")
                if kind == "differs":
                    print(offload)
                    if ours.returncode != 0:
                        print(ours.stderr[-2000:])
            if kind == "refused" and args.v:
                print("  blis:", ours.stderr.strip().splitlines()[-1:])
    print(head_pair.summary(counts))


if __name__ == "__main__":
    main()
