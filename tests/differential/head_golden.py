#!/usr/bin/env python3
"""Runs BLIS HEAD's own golden datasets on blis under --profile-set head and
compares every expected value (docs/testing.md, "Differential testing").

    tests/differential/head_golden.py [--blis build/stage/bin/blis]
        [--data ../shared/data] [--only ID] [--backend trained-physics|roofline] [-v]

For each experiment of trained_physics_iter29.json and roofline_goldendataset.json
it writes the experiment's workload as a spec and runs the command line
HEAD's golden README gives (one instance, the experiment's model folder, KV
sizes and batch limits, offload threshold 0.9, bandwidth 0.2), then prints one
line per metric that differs by more than 1e-9 relative and the counts:
exact, within 1 %, off. Exit 0 when every value matches. Not run by CI: it
reads the reference's data from ../shared, which a fresh machine has not.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def blis_command(blis, data, backend, file_doc, exp, spec_path):
    cmd = [blis, "run", "--profile-set", "head", "--model", exp["model"],
           "--model-config-folder", os.path.join(data, exp["model_config_dir"]),
           "--hardware", exp["hardware"], "--tp", str(exp["tp"]), "--latency-model", backend,
           "--max-num-seqs", str(exp["max_num_seqs"]),
           "--max-num-batched-tokens", str(exp["max_num_batched_tokens"]),
           "--total-kv-blocks", str(exp["total_kv_blocks"]), "--kv-cpu-blocks", str(exp["cpu_kv_blocks"]),
           "--kv-offload-threshold", "0.9", "--kv-transfer-bandwidth", "0.2",
           "--workload-spec", spec_path, "--seed", str(exp["workload"].get("seed", 42)),
           "--num-requests", str(exp["workload"]["num_requests"]), "--format", "json", "--log", "error"]
    if backend == "trained-physics":
        cmd += ["--alpha-coeffs", ",".join(repr(x) for x in file_doc["alpha_coeffs"]),
                "--beta-coeffs", ",".join(repr(x) for x in file_doc["beta_coeffs"])]
    return cmd


def measured(doc, key):
    c = doc["cluster"]
    if key == "ttft_sum_us":  # not printed: the mean times the count, in µs
        return round(c["ttft_mean_ms"] * c["completed_requests"] * 1000)
    return c.get(key)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--blis", default=os.path.join(ROOT, "build", "stage", "bin", "blis"))
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--only")
    ap.add_argument("--backend")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    files = {"trained-physics": "trained_physics_iter29.json", "roofline": "roofline_goldendataset.json"}
    counts = {"exact": 0, "1%": 0, "off": 0, "failed runs": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for backend, name in files.items():
            if a.backend and a.backend != backend:
                continue
            doc = json.load(open(os.path.join(a.data, "blis-head", "golden", name)))
            for exp in doc["experiments"]:
                if a.only and a.only != exp["id"]:
                    continue
                spec = os.path.join(tmp, "w.yaml")
                with open(spec, "w") as f:
                    json.dump(exp["workload"], f)  # JSON is YAML
                cmd = blis_command(a.blis, a.data, backend, doc, exp, spec)
                r = subprocess.run(cmd, capture_output=True, text=True)
                label = f"{backend} {exp['id']} ({exp['model']} TP{exp['tp']})"
                if r.returncode != 0:
                    counts["failed runs"] += 1
                    print(f"{label}: exit {r.returncode}: {r.stderr.strip()[:300]}")
                    continue
                out = json.loads(r.stdout)
                for key, want in exp["expected"].items():
                    got = measured(out, key)
                    rel = abs(got - want) / max(abs(want), 1e-300) if got is not None else float("inf")
                    kind = "exact" if rel <= 1e-9 else ("1%" if rel <= 0.01 else "off")
                    counts[kind] += 1
                    if kind != "exact" or a.v:
                        print(f"{label}: {key}: blis {got} HEAD {want} ({rel:.3g} relative)")
    total = counts["exact"] + counts["1%"] + counts["off"]
    print(f"{total} values: {counts['exact']} exact, {counts['1%']} within 1 %, {counts['off']} off; "
          f"{counts['failed runs']} runs failed")
    return 0 if counts["exact"] == total and counts["failed runs"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
