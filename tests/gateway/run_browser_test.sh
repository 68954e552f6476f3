#!/usr/bin/env bash
# The gateway's browser test (browser_test.js): Playwright driving Debian's chromium against
# `mecha serve` and `mecha gateway`. Exits 77 (CTest's skip) with one line when chromium or
# playwright-core is missing; the test itself never skips a check.
set -euo pipefail
if [ -n "${MECHA_SANITIZER_BUILD:-}" ]; then
  echo "SKIP: gateway browser test: not run in the sanitizer build (make test runs it)"
  exit 77
fi
mecha=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
chromium=${MECHA_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  echo "SKIP: gateway browser test: $chromium is not installed (apt-get install chromium)"
  exit 77
fi
if [ ! -d "$root/tests/node/node_modules/playwright-core" ]; then
  echo "SKIP: gateway browser test: playwright-core is not installed (scripts/setup --for tests)"
  exit 77
fi
if ! "$chromium" --headless --no-sandbox --disable-gpu --dump-dom about:blank >/dev/null 2>&1; then
  echo "SKIP: gateway browser test: $chromium cannot start here"
  exit 77
fi
mkdir -p "$out"
exec node "$here/browser_test.js" "$mecha" "$out" "$chromium"
