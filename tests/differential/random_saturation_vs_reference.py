#!/usr/bin/env python3
"""Random runs with the saturation detectors' flags on blis (--profile-set head)
and on HEAD (f90a1e3a): stdout and the --saturation-report files compared
(docs/testing.md, "Differential testing"; docs/cli.md, "Saturation detectors").

    tests/differential/random_saturation_vs_reference.py --reference PATH --run-dir DIR
        [--count N] [--seed S] [--blis build/stage/bin/blis] [-v]

Each configuration draws a workload from the flags (rate, requests, token
lengths, instances, sometimes a horizon or a small batch), a --detectors
selection (one name, a comma list or all), and sometimes --saturation-config
(blocks of the selected detectors), --saturation-final-window,
--saturation-report, --lazy-generation and --model-autoscaler-interval-us
(an autoscaled run compares HEAD's metrics blocks with blis's of the same
instance: blis adds its autoscaler and pools blocks). A configuration is:
  same     identical stdout and report files;
  known    differing only where docs/differences.md says the detectors
           differ: backlog-drift's label and records (row 27), or a run where
           some request never completed, whose arrivals HEAD does not see
           (row 26); an autoscaled run where HEAD drains every instance
           (row 32);
  differs  anything else;
  refused  both refused it (exit status not 0).
Not run by CI: a fresh machine has no reference build.
"""
import json
import os
import random
import re

import head_pair

ROSTER = ["composite", "threshold", "backlog-drift"]


def draw(rng, tmp, i):
    a = ["--num-instances", str(rng.randint(1, 4)), "--seed", str(rng.randrange(100)),
         "--rate", str(rng.choice([2, 10, 40, 150])), "--num-requests", str(rng.choice([30, 100, 300])),
         "--prompt-tokens", str(rng.choice([64, 512, 2048])), "--output-tokens", str(rng.choice([16, 128, 512]))]
    if rng.random() < 0.2:
        a += ["--max-num-seqs", str(rng.choice([2, 8]))]
    if rng.random() < 0.1:
        a += ["--horizon", str(rng.choice([2_000_000, 10_000_000]))]
    sel = rng.choice(["all", "one", "list"])
    if sel == "all":
        names = ROSTER
        a += ["--detectors", "all"]
    elif sel == "one":
        names = [rng.choice(ROSTER)]
        a += ["--detectors", names[0]]
    else:
        names = rng.sample(ROSTER, rng.randint(1, 3))
        a += ["--detectors", ", ".join(names) + ("," if rng.random() < 0.3 else "")]
    if rng.random() < 0.5:
        lines = []
        if "threshold" in names and rng.random() < 0.7:
            lines += ["threshold:", f"  threshold_ms: {rng.choice([50, 500, 2000, 5000])}"]
        if "backlog-drift" in names and rng.random() < 0.7:
            lines += ["backlog_drift:", f"  window_size_sec: {rng.choice([1, 5, 60])}"]
            if rng.random() < 0.5:
                lines += [f"  min_windows: {rng.choice([2, 5])}", f"  peak_ratio: {rng.choice([1.5, 2.0])}"]
        path = os.path.join(tmp, f"s{i}.yaml")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        a += ["--saturation-config", path]
    if rng.random() < 0.4:
        a += ["--saturation-final-window", rng.choice(["500ms", "2s", "30s", "1m"])]
    if rng.random() < 0.3:
        a += ["--lazy-generation"]
    if rng.random() < 0.3:
        a += ["--model-autoscaler-interval-us", rng.choice(["1000000", "5e6", "2.5e6", "0"])]
    return a


def blocks(stdout):
    """The metrics blocks by instance id."""
    out = {}
    for m in re.finditer(r"=== Simulation Metrics ===\n(\{.*?\n\})", stdout, re.S):
        iid = re.search(r'"instance_id": "([^"]+)"', m.group(1))
        out[iid.group(1) if iid else "?"] = m.group(1)
    return out


def fleet_kind(ref, ours, ref_err):
    """An autoscaled run: blis adds its === Autoscaler === and === Pools ===
    blocks and blocks of slots the autoscaler never used; HEAD's blocks must
    be blis's. HEAD removing every instance (its requests then refused) is
    docs/differences.md row 32."""
    a, b = blocks(ref), blocks(ours)
    if all(k in b and a[k] == b[k] for k in a):
        return "same"
    if "no routable instances" in ref_err:
        return "known"
    if all(k in b and (a[k] == b[k] or (k == "cluster" and drift_only(a[k], b[k]))) for k in a):
        return "known"
    return "differs"


def completed_all(stdout):
    """Whether the cluster block says every injected request completed."""
    inj = comp = None
    block = False
    for line in stdout.splitlines():
        if '"instance_id": "cluster"' in line:
            block = True
        elif block and '"injected_requests"' in line:
            inj = line.split(":")[1].strip(" ,")
        elif block and '"completed_requests"' in line:
            comp = line.split(":")[1].strip(" ,")
    return inj is not None and inj == comp


def drift_only(ref, ours):
    """The two stdouts differ only in backlog-drift's label line."""
    a, b = ref.splitlines(), ours.splitlines()
    if len(a) != len(b):
        return False
    return all(x == y or ('"backlog-drift"' in x and '"backlog-drift"' in y) for x, y in zip(a, b))


def report_kind(ref_path, ours_path):
    with open(ref_path) as f:
        ref_text = f.read()
    with open(ours_path) as f:
        ours_text = f.read()
    if ref_text == ours_text:
        return "same"
    ref, ours = json.loads(ref_text), json.loads(ours_text)
    strip = lambda d: {k: v for k, v in d.items() if k != "backlog-drift"}
    if strip(ref["final"]) != strip(ours["final"]):
        return "differs"
    keep = lambda t: [r for r in t if r["detector"] != "backlog-drift"]
    return "known" if keep(ref["trace"]) == keep(ours["trace"]) else "differs"


def main():
    args = head_pair.arguments(count=60)
    rng = random.Random(args.seed)
    counts = {"same": 0, "known": 0, "differs": 0, "refused": 0}
    with head_pair.scratch(args) as tmp:
        for i in range(args.count):
            cmd = ["run", "--model", "qwen/qwen3-14b"] + draw(rng, tmp, i)
            report = rng.random() < 0.7
            ref_cmd, ours_cmd = list(cmd), list(cmd)
            if report:
                ref_cmd += ["--saturation-report", os.path.join(tmp, f"ref{i}.json")]
                ours_cmd += ["--saturation-report", os.path.join(tmp, f"ours{i}.json")]
            ref, ours = head_pair.head(args, ref_cmd), head_pair.blis(args, ours_cmd)
            if ref.returncode != 0 or ours.returncode != 0:
                kind = "refused" if ref.returncode != 0 and ours.returncode != 0 else "differs"
            else:
                autoscaled = "--model-autoscaler-interval-us" in cmd and \
                    cmd[cmd.index("--model-autoscaler-interval-us") + 1] != "0"
                if autoscaled:
                    kinds = [fleet_kind(ref.stdout, ours.stdout, ref.stderr)]
                else:
                    kinds = ["same" if ref.stdout == ours.stdout else
                             "known" if drift_only(ref.stdout, ours.stdout) else "differs"]
                row32 = autoscaled and "no routable instances" in ref.stderr
                if report and not row32:  # HEAD refused requests blis served: other events
                    kinds.append(report_kind(os.path.join(tmp, f"ref{i}.json"), os.path.join(tmp, f"ours{i}.json")))
                kind = "differs" if "differs" in kinds else "known" if "known" in kinds else "same"
                if kind == "differs" and not completed_all(ours.stdout):
                    kind = "known"  # row 26: HEAD sees only the completed requests
            counts[kind] += 1
            if kind == "differs" or args.v:
                print(kind, " ".join(ours_cmd))
                if kind == "differs" and ours.returncode != 0:
                    print(ours.stderr[-2000:])
                if kind == "differs" and ref.returncode != 0:
                    print(ref.stderr[-2000:])
    print(head_pair.summary(counts))


if __name__ == "__main__":
    main()
