"""What the random differential scripts against BLIS HEAD share (docs/testing.md,
"Differential testing"): their command line, one command run by both binaries
(blis under --profile-set head), their scratch folder and their summary line.
"""
import argparse
import contextlib
import os
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
