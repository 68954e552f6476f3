#!/usr/bin/env bash
# Lazy start of MCP servers (issue 16: a run with two configured servers sends its first
# model request without waiting for them), through the real binary.
#
# `mecha run --json` with a scripted model whose first response is the answer, so the first
# `usage` event on stdout marks the end of the first model request. Measured from the
# process's start to that event, and to the process's exit, with no MCP server configured
# and with two servers that each take $DELAY s to start (`sleep` before the reference
# everything server). A first request that waited for them would come after $DELAY s.
# Each figure is the median of $RUNS runs after one warm-up.
#
# Measured 2026-12-01 on the shared two-core build machine, DELAY=3, RUNS=5:
#   no MCP server                    first request after    10.5 ms, exit after    12.6 ms
#   two servers starting in 3 s      first request after    13.4 ms, exit after    36.4 ms
# (the servers still starting at the end are cancelled and killed; none is left behind).
# Usage: bench/mcp_lazy_start.sh [path/to/mecha]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mecha=$(realpath "${1:-$here/build/mecha}")
RUNS=${RUNS:-5}
DELAY=${DELAY:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/mecha-mcp-lazy.XXXXXX")
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$mecha" "$RUNS" "$DELAY" \
  "$here/tests/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js" <<'PY'
import json, os, statistics, subprocess, sys, time

work, mecha, runs, delay, everything = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
tree = os.path.join(work, "tree")
os.makedirs(tree)
with open(os.path.join(work, "c.jsonl"), "w") as f:
    f.write('{"mecha_cassette": 1}\n')
    f.write('{"response": {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}}\n')
open(os.path.join(work, "none.toml"), "w").close()
with open(os.path.join(work, "two.toml"), "w") as f:
    for name in ("slow_a", "slow_b"):
        f.write(f'[mcp_servers.{name}]\ncommand = "sh"\n'
                f'args = ["-c", "sleep {delay}; exec node {everything} stdio"]\n')

def once(config):
    start = time.perf_counter()
    p = subprocess.Popen([mecha, "run", "--json", "--config", config, "--store",
                          os.path.join(work, "s.db"), "--model",
                          "cassette:" + os.path.join(work, "c.jsonl"), "go"],
                         cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first = None
    for line in p.stdout:
        if first is None and json.loads(line).get("type") == "usage":
            first = time.perf_counter() - start
    p.wait()
    assert p.returncode == 0, p.returncode
    return first * 1000, (time.perf_counter() - start) * 1000

for label, config in (("no MCP server", "none.toml"), (f"two servers starting in {delay} s", "two.toml")):
    once(os.path.join(work, config))
    samples = [once(os.path.join(work, config)) for _ in range(runs)]
    print(f"{label:32} first request after {statistics.median(s[0] for s in samples):7.1f} ms, "
          f"exit after {statistics.median(s[1] for s in samples):7.1f} ms")
PY
