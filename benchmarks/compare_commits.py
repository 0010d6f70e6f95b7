"""Two commits side by side in one run: ``run_all.py --quick`` (and the 1,000-dispatch list
compile of ``bench_lists.py``) for a base commit and the working tree, alternating, several
rounds; prints each dmlsim timing's median for both and their ratio.

    python benchmarks/compare_commits.py [--base HEAD~1 | --base-dir DIR] [--rounds 3] [--gpu]
                                         [--json out.json]

The base is checked out with ``git worktree`` into a temporary folder and imported from there
(PYTHONPATH), or given as a folder holding its tree (``--base-dir``: ``git archive REV | tar
-x -C DIR``, for a machine without the repository); the working tree is imported from here. Rounds alternate base and head, so a
machine that slows down mid-run slows both. Besides the plain ratio (head time / base time)
each row with a raw-JAX baseline measured in the same process gets the ratio of the two
runs' dmlsim/raw ratios, which cancels the machine's drift between processes.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _leaves(x, path=""):
    """(path, value) for every numeric leaf of a result tree (lists keyed by their size)."""
    if isinstance(x, dict):
        for k, v in x.items():
            if k != "machine":
                yield from _leaves(v, f"{path}/{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            key = "/".join(str(v.get(f)) for f in ("operator", "model", "elements", "size",
                                                  "dispatches") if isinstance(v, dict) and f in v)
            yield from _leaves(v, f"{path}[{key or i}]")
    elif isinstance(x, (int, float)) and not isinstance(x, bool):
        yield path, float(x)


def _timings(results):
    """{metric: seconds or µs} of dmlsim's own timings, and {metric: dmlsim/raw}."""
    times, rel = {}, {}
    leaves = dict(_leaves(results))
    for path, value in leaves.items():
        leaf = path.rsplit("/", 1)[-1]
        if leaf.startswith("dmlsim") and leaf.endswith(("_us", "_s")) or \
                leaf in ("compile_s", "first_s", "create_operator_us",
                         "compile_operator_cached_us"):
            times[path] = value
    for path, value in times.items():
        raw = path.rsplit("/", 1)[0] + "/raw_us"
        if path.endswith("/dmlsim_us") and leaves.get(raw):
            rel[path] = value / leaves[raw]
    return times, rel


def _run(tree, out, gpu):
    env = dict(os.environ, PYTHONPATH=tree)
    cmd = [sys.executable, os.path.join(tree, "benchmarks", "run_all.py"), "--quick",
           "--out", out] + (["--gpu"] if gpu else [])
    subprocess.run(cmd, cwd=tree, env=env, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "all.json")) as f:
        results = json.load(f)
    lists = os.path.join(out, "lists.json")
    subprocess.run([sys.executable, os.path.join(tree, "benchmarks", "bench_lists.py"),
                    "--sizes", "1000", "--json", lists], cwd=tree, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    with open(lists) as f:
        results["lists"] = json.load(f)
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", default="HEAD~1")
    ap.add_argument("--base-dir", default=None, help="the base's tree, already extracted")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="dmlsim-compare-")
    if args.base_dir:
        rev, base_tree = os.path.basename(os.path.abspath(args.base_dir)), \
            os.path.abspath(args.base_dir)
    else:
        rev = subprocess.check_output(["git", "rev-parse", "--short", args.base], cwd=ROOT,
                                      text=True).strip()
        base_tree = os.path.join(work, f"base-{rev}")
        subprocess.run(["git", "worktree", "add", "--detach", "-q", base_tree, rev], cwd=ROOT,
                       check=True)
    runs = {"base": [], "head": []}
    try:
        for r in range(args.rounds):
            for name, tree in (("base", base_tree), ("head", ROOT)):
                print(f"round {r + 1}/{args.rounds}: {name}", flush=True)
                runs[name].append(_run(tree, os.path.join(work, f"{name}{r}"), args.gpu))
    finally:
        if not args.base_dir:
            subprocess.run(["git", "worktree", "remove", "--force", base_tree], cwd=ROOT)
    med = {}
    for name, results in runs.items():
        per = [_timings(x) for x in results]
        med[name] = ({k: statistics.median(p[0][k] for p in per if k in p[0]) for k in per[0][0]},
                     {k: statistics.median(p[1][k] for p in per if k in p[1]) for k in per[0][1]})
    rows, logs, rel_logs = [], [], []
    print(f"\nbase {rev} vs the working tree, median of {args.rounds} alternating rounds\n")
    print("| metric | base | head | head/base | (dmlsim/raw) head/base |")
    print("|---|---|---|---|---|")
    for k, b in med["base"][0].items():
        h = med["head"][0].get(k)
        if h is None or b <= 0:
            continue
        rb, rh = med["base"][1].get(k), med["head"][1].get(k)
        rr = rh / rb if rb and rh else None
        logs.append(math.log(h / b))
        if rr:
            rel_logs.append(math.log(rr))
        rows.append({"metric": k, "base": b, "head": h, "ratio": h / b, "raw_ratio": rr})
        print(f"| {k} | {b:.4g} | {h:.4g} | {h / b:.3f} | {'' if rr is None else f'{rr:.3f}'} |")
    gm = math.exp(statistics.mean(logs))
    gr = math.exp(statistics.mean(rel_logs)) if rel_logs else float("nan")
    print(f"\ngeometric mean head/base: {gm:.3f} over {len(logs)} timings; of the dmlsim/raw "
          f"ratios: {gr:.3f} over {len(rel_logs)}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"base": rev, "rounds": args.rounds, "rows": rows,
                       "geomean": gm, "geomean_raw_normalized": gr}, f, indent=1)
    return rows


if __name__ == "__main__":
    main()
