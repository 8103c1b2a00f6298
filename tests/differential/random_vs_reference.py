#!/usr/bin/env python3
"""Random configurations on blis and on a reference binary, every printed line
compared (docs/testing.md, "Differential testing").

    tests/differential/random_vs_reference.py --reference PATH --run-dir DIR
        [--profile head|seed] [--count N] [--seed S] [--blis build/stage/bin/blis] [-v]

--reference is a build of BLIS (../shared/reference/README.md says how), run
in --run-dir, the folder holding its defaults.yaml, hardware_config.json and
model_configs/. With --profile head, blis runs with --profile-set head and
the reference should be HEAD (f90a1e3a); with seed, the seed (c9ca689b).
Each configuration draws flags both accept; stdout is compared line by line
(blis prints the reference's format). Prints one line per configuration that
differs (its command and the first differing line) and the counts. Not run by
CI: a fresh machine has no reference build.
"""
import argparse
import os
import random
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Models with an architecture in both (HEAD's model_configs/ and blis's data).
MODELS = ["qwen/qwen3-14b", "qwen/qwen2.5-7b-instruct", "meta-llama/llama-3.1-8b-instruct",
          "codellama/codellama-34b-instruct-hf", "redhatai/llama-4-scout-17b-16e-instruct-fp8-dynamic"]


def draw(rng, profile):
    # The seed cannot read scout's config.json offline (../shared/reference/BUILD-c9ca689b.md).
    a = ["run", "--model", rng.choice(MODELS if profile == "head" else MODELS[:4]), "--seed", str(rng.randrange(1000)),
         "--rate", str(rng.choice([1, 2, 5, 10, 20, 50])), "--num-requests", str(rng.choice([10, 20, 50, 100]))]
    if rng.random() < 0.5:
        a += ["--num-instances", str(rng.randint(1, 4))]
        routing = rng.choice(["round-robin", "least-loaded", "weighted"])
        a += ["--routing-policy", routing]
        if routing == "weighted" and rng.random() < 0.5:
            a += ["--routing-scorers", rng.choice(["queue-depth:1", "kv-utilization:2,queue-depth:1",
                                                   "prefix-affinity:3,queue-depth:2,kv-utilization:2"])]
    head = profile == "head"
    if rng.random() < 0.4:
        a += ["--latency-model", rng.choice(["roofline", "trained-physics"] if head else
                                            ["roofline", "blackbox", "crossmodel", "trained-roofline"])]
    if rng.random() < 0.3:
        a += ["--scheduler", rng.choice(["fcfs", "sjf", "priority-fcfs"])]
    if not head and rng.random() < 0.3:
        a += ["--priority-policy", rng.choice(["constant", "slo-based", "inverted-slo"])]
    if rng.random() < 0.3:  # the seed's names of the two batch limits; HEAD's
        a += ["--max-num-seqs" if head else "--max-num-running-reqs", str(rng.choice([4, 16, 64, 256]))]
    if rng.random() < 0.3:
        a += ["--max-num-batched-tokens" if head else "--max-num-scheduled-tokens",
              str(rng.choice([512, 2048, 8192]))]
    if rng.random() < 0.3:
        a += ["--total-kv-blocks", str(rng.choice([500, 2000, 20000]))]
    if rng.random() < 0.3:
        a += ["--prompt-tokens", str(rng.choice([64, 512, 2048])), "--output-tokens", str(rng.choice([16, 128, 512]))]
    if rng.random() < 0.2:
        a += ["--admission-policy", "token-bucket", "--token-bucket-capacity", str(rng.choice([2000, 20000])),
              "--token-bucket-refill-rate", str(rng.choice([500, 5000]))]
    if rng.random() < 0.2:
        a += ["--prefix-tokens", str(rng.choice([32, 256]))]
    if head and rng.random() < 0.15:  # HEAD's CPU tier
        a += ["--kv-cpu-blocks", str(rng.choice([200, 2000])), "--kv-offload-threshold", str(rng.choice([0.5, 0.9]))]
    if head and rng.random() < 0.15:  # goodput
        a += ["--slo-ttft", rng.choice(["standard=100ms", "standard=2s"])]
    if head and rng.random() < 0.15:  # prefill/decode disaggregation
        a += ["--num-instances", "3", "--prefill-instances", "1", "--decode-instances", "2",
              "--pd-decider", rng.choice(["always", "never"])]
    return a


# A difference the reference's own log explains, by docs/differences.md row.
# Row 6: the reference admits a prompt whose every block is cached with no
# work: AllocateKVBlocks(start = end = input length) claims no block, so the
# prompt's KV stays evictable while the request decodes (blis recomputes the
# last block, as vLLM does). Under HEAD's restart preemption a victim whose
# prompt is a whole number of blocks comes back that way.
ZERO_WORK = re.compile(r"Num Inputs: (\d+), startIndex = \1, endIndex = \1\"")


METRIC = re.compile(r'^  "([a-z0-9_]+)": (.*?),?$')


def only_output_token_count(ref_out, mine_out):
    """Row 1: the seed leaves each request's first output token out of
    total_output_tokens (and tokens_per_sec); every other line is the same."""
    a, b = ref_out.splitlines(), mine_out.splitlines()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x == y:
            continue
        mx, my = METRIC.match(x), METRIC.match(y)
        if not mx or not my or mx.group(1) != my.group(1):
            return False
        if mx.group(1) == "total_output_tokens" and int(my.group(2)) > int(mx.group(2)):
            continue
        if mx.group(1) == "tokens_per_sec":
            continue
        return False
    return True


def explained(o, args, ref, mine):
    if o.profile == "seed" and only_output_token_count(ref.stdout, mine.stdout):
        return "differences.md row 1 (the seed's total_output_tokens leaves out first tokens)"
    if (o.profile == "head" and re.search(r'"timed_out_requests": [1-9]', ref.stdout)
            and only_output_token_count(ref.stdout, mine.stdout)):
        return "differences.md row 38 (HEAD leaves out the tokens timed-out requests streamed)"
    if o.profile == "head" and re.search(r"^Disaggregated Requests: [1-9]", ref.stdout, re.M):
        return "differences.md row 51 (HEAD starts the KV transfer at the prefill step's start, decodes one step short)"
    if o.profile == "seed" and re.search(r'"preemption_count": [1-9]', ref.stdout):
        return "differences.md rows 2-3 (the seed's preemption: leaked blocks, tokens made twice)"
    log = subprocess.run([os.path.abspath(o.reference)] + args + ["--log", "debug"], cwd=o.run_dir,
                         capture_output=True, text=True, timeout=o.timeout).stderr
    if o.profile == "seed":
        t = step_before_arrival(log)
        if t is not None:
            return f"differences.md row 8 (at {t} µs the seed's heap ran a step before an arrival of the same µs)"
    n = len(ZERO_WORK.findall(log))
    if n:
        return f"differences.md row 6 ({n} fully cached prompts admitted with no work)"
    n = held_while_waiting(log) if "--kv-cpu-blocks" in args else 0
    return f"differences.md row 44 ({n} waiting requests holding reloaded blocks)" if n else None


EXECUTING = re.compile(r"\[tick 0*(\d+)\] Executing \*sim\.(\w+)")


def step_before_arrival(log):
    """Row 8: the seed's instance queue is a heap on time alone, so a step and
    a request's arrival or enqueue at the same µs may run step first, where
    blis runs arrival, enqueue, then step. The first such µs, or None."""
    stepped = None
    for line in log.splitlines():
        m = EXECUTING.search(line)
        if not m:
            continue
        t, kind = int(m.group(1)), m.group(2)
        if kind == "StepEvent":
            stepped = t
        elif kind in ("ArrivalEvent", "QueuedEvent") and stepped == t:
            return t
    return None


ALLOC = re.compile(r"AllocateBlock for ReqID: (\S+), Num Inputs: \d+, startIndex = (\d+)")
FULL = re.compile(r"KV cache full: cannot allocate \d+ new \+ 0 cached blocks for req (\S+)\"")
SCHEDULED = re.compile(r"<< Schedule: (\S+) at")
PREEMPTED = re.compile(r"preemption: evicting (\S+) to make room")


def held_while_waiting(log):
    """Row 44: HEAD's CPU tier committed reloaded blocks to a request whose
    chunk then did not fit; its log shows the request, waiting,
    failing with no cached block to claim at a start past its prompt's
    beginning (a preempted request waits again)."""
    scheduled, last, n = set(), None, 0
    for line in log.splitlines():
        m = SCHEDULED.search(line)
        if m:
            scheduled.add(m.group(1))
            continue
        m = PREEMPTED.search(line)
        if m:
            scheduled.discard(m.group(1))
            continue
        m = ALLOC.search(line)
        if m:
            last = (m.group(1), int(m.group(2)))
            continue
        m = FULL.search(line)
        if m and last and last[0] == m.group(1) and last[1] > 0 and m.group(1) not in scheduled:
            n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True)
    ap.add_argument("--run-dir", required=True)
    ap.add_argument("--profile", choices=["head", "seed"], default="head")
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--blis", default=os.path.join(ROOT, "build", "stage", "bin", "blis"))
    ap.add_argument("--timeout", type=float, default=120, help="seconds a reference run may take")
    ap.add_argument("-v", action="store_true")
    o = ap.parse_args()
    rng = random.Random(o.seed)
    same = differ = refused_both = explained_count = 0
    for _ in range(o.count):
        args = draw(rng, o.profile)
        try:
            ref = subprocess.run([os.path.abspath(o.reference)] + args, cwd=o.run_dir, capture_output=True,
                                 text=True, timeout=o.timeout)
        except subprocess.TimeoutExpired:
            # Row 2: the seed may step forever after an allocation leaked its blocks.
            ref = subprocess.CompletedProcess(args, 124, "", "timed out")
        mine = subprocess.run([o.blis] + args + (["--profile-set", "head"] if o.profile == "head" else []),
                              capture_output=True, text=True)
        if ref.returncode != 0 and mine.returncode != 0:
            refused_both += 1
            continue
        if ref.stdout == mine.stdout and (ref.returncode == 0) == (mine.returncode == 0):
            same += 1
            if o.v:
                print("same:", " ".join(args))
            continue
        a, b = ref.stdout.splitlines(), mine.stdout.splitlines()
        why = explained(o, args, ref, mine) if ref.returncode == 0 and mine.returncode == 0 else None
        if (ref.returncode == 124 and mine.returncode == 0 and o.profile == "seed"
                and re.search(r'"preemption_count": [1-9]', mine.stdout)):
            why = "differences.md row 2 (the seed never finished: leaked KV blocks, endless steps)"
        if why:
            explained_count += 1
            if o.v:
                print("explained:", " ".join(args), "--", why)
            continue
        differ += 1
        first = next((i for i in range(max(len(a), len(b))) if i >= len(a) or i >= len(b) or a[i] != b[i]), None)
        print("differ:", " ".join(args))
        print(f"   exit reference {ref.returncode}, blis {mine.returncode}")
        if first is not None:
            print("   reference:", a[first] if first < len(a) else "(end)")
            print("   blis:     ", b[first] if first < len(b) else "(end)")
        if mine.returncode != 0:
            print("   blis stderr:", mine.stderr.strip()[:200])
    print(f"{o.count} configurations: {same} identical stdout, {explained_count} differ as docs/differences.md "
          f"explains, {differ} differ otherwise, {refused_both} refused by both")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
