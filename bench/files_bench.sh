#!/usr/bin/env bash
# Benchmarks of the file tools, through the real binary (`mecha run` with a scripted model
# that makes one tool call), against ripgrep run directly with the same flags:
#   - Grep and Glob over a generated tree of 100,000 files (target: within 1.5x of rg);
#   - Read at an offset in the middle of a 1 GiB sparse file (target: < 50 ms, < 20 MB RSS).
# Each figure is the median of $RUNS runs after one warm-up; peak RSS is /usr/bin/time's.
# Usage: bench/files_bench.sh [path/to/mecha]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mecha=$(realpath "${1:-$here/build/mecha}")
RUNS=${RUNS:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/mecha-files-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$mecha" "$RUNS" <<'PY'
import json, os, statistics, subprocess, sys, time

work, mecha, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
tree = os.path.join(work, "tree")
store = os.path.join(work, "sessions.db")  # the runs' sessions, kept out of the user's state

# 100 folders x 10 subfolders x 100 files; 1 file in 100 holds the needle.
t0 = time.perf_counter()
for d in range(100):
    for s in range(10):
        folder = os.path.join(tree, f"d{d:03}", f"s{s:02}")
        os.makedirs(folder)
        for f in range(100):
            n = (d * 10 + s) * 100 + f
            ext = "py" if f % 4 == 0 else "txt"
            with open(os.path.join(folder, f"f{f:03}.{ext}"), "w") as out:
                out.write(f"file {n}\nsome text of the file {n}\n")
                if n % 100 == 7:
                    out.write("the needle is here\n")
with open(os.path.join(tree, ".gitignore"), "w") as out:
    out.write("*.log\n")
print(f"generated 100,000 files in {time.perf_counter() - t0:.1f} s under {tree}")

# A 1 GiB sparse file: 1000 text lines at 0, 256, 512 and 768 MiB, holes between.
sparse = os.path.join(tree, "big.data")
with open(sparse, "wb") as out:
    out.truncate(1 << 30)
    for k in range(4):
        out.seek(k * (256 << 20))
        out.write(("" if k == 0 else "\n").encode() + "".join(f"block {k} line {i}\n" for i in range(1000)).encode())

def cassette(name, tool, tool_input):
    path = os.path.join(work, "".join(c if c.isalnum() else "_" for c in name) + ".jsonl")
    with open(path, "w") as f:
        f.write(json.dumps({"mecha_cassette": 1, "note": "benchmark"}) + "\n")
        f.write(json.dumps({"response": {"content": [{"type": "tool_use", "id": "t1", "name": tool, "input": tool_input}]}}) + "\n")
        f.write(json.dumps({"response": {"content": [{"type": "text", "text": "done"}]}}) + "\n")
    return path

def measure(argv, cwd):
    """Median wall time (ms) and the largest peak RSS (MB) over the runs."""
    # stdout is a pipe, never /dev/null: ripgrep stops at the first match when it sees
    # that its output goes nowhere, which would flatter the baseline.
    # stdin is /dev/null as in mecha's runner: ripgrep without a path searches its stdin
    # when that is a pipe or a file (here it would be this script).
    subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    times, rss = [], 0
    for _ in range(runs):
        t = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, cwd=cwd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        times.append((time.perf_counter() - t) * 1000)
        rss = max(rss, int(p.stderr.strip().splitlines()[-1]) / 1024)
    return statistics.median(times), rss

def run_tool(name, tool, tool_input):
    c = cassette(name, tool, tool_input)
    # The tool really ran and did not fail.
    events = subprocess.run([mecha, "run", "--json", "--model", "cassette:" + c, "--store", store, "bench"], cwd=tree,
                            capture_output=True, text=True).stdout.splitlines()
    result = next(json.loads(e) for e in events if json.loads(e)["type"] == "tool_result")
    assert not result["is_error"], result["content"][:300]
    return measure([mecha, "run", "--model", "cassette:" + c, "--store", store, "bench"], tree), result["content"]

rg = ["rg", "--no-config", "--hidden", "--no-require-git", "--color=never"]
none = os.path.join(work, "none.jsonl")
with open(none, "w") as f:
    f.write(json.dumps({"mecha_cassette": 1}) + "\n")
    f.write(json.dumps({"response": {"content": [{"type": "text", "text": "done"}]}}) + "\n")
base_ms, base_mb = measure([mecha, "run", "--model", "cassette:" + none, "--store", store, "x"], tree)
print(f"mecha run without a tool call (start, config, cassette): {base_ms:.1f} ms, {base_mb:.1f} MB peak RSS")

rows = []
def compare(label, tool, tool_input, rg_argv, rg_label):
    (ms, mb), content = run_tool(label, tool, tool_input)
    rg_ms, rg_mb = measure(rg_argv, tree)
    rows.append((label, ms, mb, rg_label, rg_ms, ms / rg_ms))

files = rg + ["--files", "--glob=!.git"]
compare("Grep files_with_matches 'needle'", "Grep", {"pattern": "needle"},
        rg + ["--files-with-matches", "--glob=!.git", "-e", "needle"], "rg -l needle")
compare("Grep content 'needle'", "Grep", {"pattern": "needle", "output_mode": "content"},
        rg + ["--with-filename", "--no-heading", "--sort=path", "--line-number", "--glob=!.git", "-e", "needle"],
        "rg -n --sort=path needle")
compare("Glob 'd042/**/f01?.txt' (90 matches)", "Glob", {"pattern": "d042/**/f01?.txt"}, files, "rg --files")
compare("Glob '**/*.py' (25,000 matches)", "Glob", {"pattern": "**/*.py"}, files, "rg --files")
compare("Glob '**/*' (100,000 matches)", "Glob", {"pattern": "**/*"}, files, "rg --files")
compare("Glob '**/*' (100,000 matches)", "Glob", {"pattern": "**/*"}, files + ["--sortr=modified"],
        "rg --files --sortr=modified")

print(f"\n{'mecha tool call':<38} {'ms':>7} {'RSS MB':>7}   {'ripgrep directly':<28} {'ms':>7} {'ratio':>6}")
for label, ms, mb, rg_label, rg_ms, ratio in rows:
    print(f"{label:<38} {ms:>7.1f} {mb:>7.1f}   {rg_label:<28} {rg_ms:>7.1f} {ratio:>5.2f}x")
print("(a mecha figure is a whole `mecha run`: process start, a model turn from the cassette, the "
      "tool call, the answer. Glob sorts newest first, so it stats every match, which plain "
      "`rg --files` does not; `rg --files --sortr=modified` does the same work.)")

(ms, mb), content = run_tool("read", "Read", {"file_path": "big.data", "offset": 2003, "limit": 100})
assert content.startswith("  2003\tblock 2 line 0\n"), content[:200]
print(f"\nRead offset=2003 limit=100 in the middle of a 1 GiB sparse file: {ms:.1f} ms, "
      f"{mb:.1f} MB peak RSS (targets: < 50 ms, < 20 MB)")
PY
