"""What the random differential scripts against BLIS HEAD share (docs/testing.md,
"Differential testing"): their command line, one command run by both binaries
(blis under --profile-set head), their scratch folder and their summary line.
"""
import argparse
import contextlib
import os
import re
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def arguments(count, keep=None, timeout=None):
    """The scripts' flags, parsed: --reference, --run-dir, --blis, --count,
    --seed, -v, and --keep (with its help text) or --timeout (seconds a
    reference run may take) for the scripts that take them."""
    p = argparse.ArgumentParser()
    p.add_argument("--reference", required=True, help="BLIS HEAD's binary")
    p.add_argument("--run-dir", required=True, help="the folder HEAD runs in (its defaults.yaml)")
    p.add_argument("--blis", default=os.path.join(ROOT, "build", "stage", "bin", "blis"))
    p.add_argument("--count", type=int, default=count)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("-v", action="store_true")
    if keep:
        p.add_argument("--keep", help=keep)
    if timeout is not None:
        p.add_argument("--timeout", type=float, default=timeout, help="seconds a reference run may take")
    return p.parse_args()


def head(args, cmd, timeout=None):
    """`cmd` run by HEAD, in its run folder."""
    return subprocess.run([os.path.abspath(args.reference)] + cmd, cwd=args.run_dir, capture_output=True, text=True,
                          timeout=timeout)


def blis(args, cmd, profile=True):
    """`cmd` run by blis, under --profile-set head unless `profile` is false."""
    return subprocess.run([args.blis] + cmd + (["--profile-set", "head"] if profile else []), capture_output=True,
                          text=True)


# docs/differences.md row 6: HEAD admits a prompt whose every block is cached,
# a whole number of blocks (a preempted request coming back), with no work
# and no blocks; its debug log shows the admission as an allocation from the
# prompt's end to the prompt's end.
ZERO_WORK = re.compile(r"Num Inputs: (\d+), startIndex = \1, endIndex = \1\"")


def zero_work_admissions(args, cmd, timeout=None):
    """How many row-6 admissions HEAD's debug log of `cmd` shows."""
    return len(ZERO_WORK.findall(head(args, cmd + ["--log", "debug"], timeout=timeout).stderr))


def refused_cleanly(run):
    """blis refused with exit 2, one error line and nothing on stdout."""
    errors = [x for x in run.stderr.splitlines() if x.startswith("blis: error")]
    return run.returncode == 2 and len(errors) == 1 and not run.stdout


@contextlib.contextmanager
def scratch(args):
    """The folder for a run's files: --keep's (kept), or a temporary one."""
    keep = getattr(args, "keep", None)
    if keep:
        os.makedirs(keep, exist_ok=True)
        yield keep
        return
    with tempfile.TemporaryDirectory() as tmp:
        yield tmp


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def summary(counts):
    """The last line: each kind and its count."""
    return " ".join(f"{k}={v}" for k, v in counts.items())


def prefix_groups_spec(rng):
    """A workload spec of one to three clients, each its own prefix group
    (so that prompt blocks evicted from the GPU come back), Poisson arrivals,
    Gaussian prompts and exponential outputs."""
    n = rng.choice([1, 2, 3])
    lines = ['version: "2"', f"seed: {rng.randrange(1000)}", f"aggregate_rate: {rng.choice([2, 4, 8, 20])}",
             f"num_requests: {rng.choice([60, 120, 200])}", "clients:"]
    for i in range(n):
        lines += [f"  - id: c{i}", f"    rate_fraction: {round(1.0 / n, 3)}",
                  f"    prefix_group: g{i}", f"    prefix_length: {rng.choice([256, 512, 1024])}",
                  "    arrival: {process: poisson}"]
        m = rng.choice([64, 200, 400])
        lines.append("    input_distribution: {type: gaussian, params: {mean: %d, std_dev: %d, min: 8, max: %d}}"
                     % (m, m // 4, 2 * m))
        lines.append("    output_distribution: {type: exponential, params: {mean: %d}}" % rng.choice([8, 32, 64]))
    return "\n".join(lines) + "\n"


def compare(args, cmd):
    """`cmd` on both: (kind, blis's run), kind "same" (identical stdout),
    "refused" (both exit non-zero), "hang" (HEAD did not finish within
    --timeout seconds; blis did) or "differs"."""
    ours = blis(args, cmd)
    try:
        ref = head(args, cmd, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return ("hang" if ours.returncode == 0 else "differs"), ours
    if ref.returncode != 0 or ours.returncode != 0:
        return ("refused" if ref.returncode != 0 and ours.returncode != 0 else "differs"), ours
    return ("same" if ref.stdout == ours.stdout else "differs"), ours

