#!/usr/bin/env python3
"""Random tenant-budget and SLO-priority runs on blis (--profile-set head) and
on HEAD (f90a1e3a), stdout compared byte for byte (docs/testing.md,
"Differential testing"; docs/gateway.md "Tenant budgets and SLO priorities").

    tests/differential/random_tenants_vs_reference.py --reference PATH --run-dir DIR
        [--count N] [--seed S] [--blis build/stage/bin/blis] [-v] [--keep DIR]

Each configuration draws a workload of two to four clients (tenants, SLO
classes, sometimes a client's own slo_target_us) and a policy file with
tenant_budgets, admission.slo_priorities (overrides that may turn a class
sheddable or not) and sometimes admission.slo_targets; the run has flow
control on (a gated gateway: priority or slo-deadline order, shedding,
eviction) or off (always-admit, tier-shed or gaie-legacy behind the budgets).
Small batches (--max-num-seqs) make the budgets bite. A configuration is
"same" (identical stdout), "refused" (both exit non-zero), "explained" (it
differs, and HEAD's debug log shows docs/differences.md row 6: a preempted
request whose prompt is a whole number of blocks, still cached, admitted
again with no work) or "differs"; "budgets_bite" counts the same ones whose
HEAD output changes without the file's tenant_budgets. Not run by CI: a
fresh machine has no reference build.
"""
import os
import random

import head_pair

DEFAULT = {"critical": 4, "standard": 3, "": 3, "batch": -1, "sheddable": -2, "background": -3}
CLASSES = ["critical", "standard", "sheddable", "batch", "background"]


def draw_spec(rng):
    n = rng.choice([2, 3, 3, 4])
    classes = [rng.choice(CLASSES) for _ in range(n)]
    lines = ['version: "2"', f"seed: {rng.randrange(1000)}", f"aggregate_rate: {rng.choice([50, 200, 600])}",
             f"num_requests: {rng.choice([150, 300])}", "clients:"]
    for i, slo in enumerate(classes):
        lines += [f"  - id: c{i}", f"    rate_fraction: {round(1.0 / n, 3)}", f"    slo_class: {slo}",
                  f"    tenant_id: t{rng.randint(1, 3)}"]
        if rng.random() < 0.3:
            lines.append(f"    slo_target_us: {rng.choice([20000, 100000, 400000])}")
        lines.append("    arrival: {process: %s}" % rng.choice(["poisson", "constant", "gamma, cv: 2.0"]))
        m = rng.choice([64, 256, 1024])
        lines.append("    input_distribution: {type: gaussian, params: {mean: %d, std_dev: %d, min: 8, max: %d}}"
                     % (m, m // 4, 4 * m))
        o = rng.choice([16, 64, 200])
        lines.append("    output_distribution: {type: exponential, params: {mean: %d}}" % o)
    return "\n".join(lines) + "\n", classes


def draw_policy(rng, classes, admission):
    """The policy file's text and the priorities it makes."""
    prio = dict(DEFAULT)
    lines = []
    if admission:
        lines += ["admission:", f"  policy: {admission}"]
        if admission == "tier-shed" and rng.random() < 0.5:  # absent: HEAD's file default, 3
            lines.append(f"  tier_shed_min_priority: {rng.choice([0, 1, 3])}")
    overrides = {}
    if rng.random() < 0.7:
        for c in rng.sample(CLASSES, rng.randint(1, 3)):
            overrides[c] = rng.choice([-5, -1, 0, 2, 7])
            prio[c] = overrides[c]
    targets = {}
    if rng.random() < 0.4:
        for c in sorted(set(classes)):
            if rng.random() < 0.7:
                targets[c] = rng.choice([30000, 150000, 800000])
    if overrides or targets:
        if not admission:
            lines.append("admission:")
        if overrides:
            lines.append("  slo_priorities:")
            lines += [f"    {c}: {v}" for c, v in overrides.items()]
        if targets:
            lines.append("  slo_targets:")
            lines += [f"    {c}: {v}" for c, v in targets.items()]
    lines.append("tenant_budgets:")
    for t in rng.sample(["t1", "t2", "t3"], rng.randint(1, 3)):
        lines.append(f"  {t}: {rng.choice([0.0, 0.05, 0.1, 0.25, 0.5, 1.0])}")
    return "\n".join(lines) + "\n", prio


def draw_flags(rng, prio, classes):
    a = ["--num-instances", str(rng.randint(1, 3)), "--seed", str(rng.randrange(100)),
         "--max-num-seqs", str(rng.choice([2, 4, 8, 16]))]
    if rng.random() < 0.2:
        a += ["--routing-policy", rng.choice(["least-loaded", "weighted"])]
    if rng.random() < 0.2:
        a += ["--admission-latency", str(rng.choice([0, 500, 2000])), "--routing-latency", str(rng.choice([0, 1000]))]
    if rng.random() < 0.2:
        a += ["--preemption-policy", "priority", "--total-kv-blocks", str(rng.choice([300, 1000]))]
    flow = rng.random() < 0.5
    if not flow:
        return a, rng.choice([None, None, "tier-shed", "gaie-legacy"])
    a += ["--flow-control", "--saturation-detector", rng.choice(["utilization", "concurrency", "concurrency"])]
    if "concurrency" in a:
        a += ["--max-concurrency", str(rng.choice([1, 2, 4, 8]))]
    one_band = len({prio[c] for c in classes}) == 1
    order = rng.choice(["priority", "slo-deadline", "slo-deadline"] + (["fifo"] if one_band else []))
    a += ["--dispatch-order", order, "--fairness-policy", "global-strict" if order == "fifo" else
          rng.choice(["global-strict", "round-robin"])]
    if order == "slo-deadline" and rng.random() < 0.3:
        a += ["--slo-targets", ",".join(f"{c}={rng.choice([50000, 200000])}" for c in sorted(set(classes)))]
    if rng.random() < 0.4:
        a += ["--max-gateway-queue-depth", str(rng.choice([5, 20])), "--queue-shedding"]
    if rng.random() < 0.3:
        a += ["--in-flight-eviction"]
    if rng.random() < 0.3:
        a += ["--request-ttl", str(rng.choice([50000, 500000]))]
    return a, None


def main():
    args = head_pair.arguments(count=40, keep="write the workload specs and policy files here (and keep them)")
    rng = random.Random(args.seed)
    counts = {"same": 0, "explained": 0, "differs": 0, "refused": 0, "budgets_bite": 0}
    with head_pair.scratch(args) as tmp:
        for i in range(args.count):
            text, classes = draw_spec(rng)
            spec = head_pair.write(os.path.join(tmp, f"w{i}.yaml"), text)
            flags, admission = draw_flags(rng, dict(DEFAULT), classes)
            policy_text, prio = draw_policy(rng, classes, admission)
            if "fifo" in flags and len({prio[c] for c in classes}) > 1:  # HEAD's fifo is fifo in one band only
                flags[flags.index("fifo")] = "priority"
            policy = head_pair.write(os.path.join(tmp, f"p{i}.yaml"), policy_text)
            cmd = ["run", "--model", "qwen/qwen3-14b", "--workload-spec", spec, "--policy-config", policy] + flags
            ref, ours = head_pair.head(args, cmd), head_pair.blis(args, cmd)
            n = 0  # row 6's admissions in HEAD's debug log, looked for when both ran and differ
            if ref.returncode != 0 or ours.returncode != 0:
                kind = "refused" if ref.returncode != 0 and ours.returncode != 0 else "differs"
            elif ref.stdout == ours.stdout:
                kind = "same"
            else:
                n = head_pair.zero_work_admissions(args, cmd)
                kind = "explained" if n else "differs"
            counts[kind] += 1
            # Whether the budgets mattered: HEAD again without them.
            unbudgeted = head_pair.write(os.path.join(tmp, f"p{i}-nob.yaml"), policy_text.split("tenant_budgets:")[0])
            alone = head_pair.head(args, [unbudgeted if x == policy else x for x in cmd])
            counts["budgets_bite"] += kind == "same" and alone.stdout != ref.stdout
            if n:
                print(f"explained (differences.md row 6: {n} fully cached prompts admitted with no work):",
                      " ".join(cmd))
            elif kind == "differs" or args.v:
                print(kind, " ".join(cmd))
                if kind == "differs":
                    print(text + policy_text)
                    if ours.returncode != 0:
                        print(ours.stderr[-2000:])
                    if ref.returncode != 0:
                        print(ref.stderr[-2000:])
    print(head_pair.summary(counts))


if __name__ == "__main__":
    main()
