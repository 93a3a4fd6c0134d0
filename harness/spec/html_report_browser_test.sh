#!/usr/bin/env bash
# html_report_browser_test.sh OPSPEC PLUGIN SUITE: renders `opspec run
# --report` of SUITE (a pass, a failure, a graph break, a divergence) and
# checks the pages in headless Chromium, through the DOM it builds: the case
# list and its filter (from the URL, as a shared link opens it), a graph's
# SVG and its nodes, the break's reason, the divergent op marked. Exits 77
# (ctest: skipped) where Chromium is not installed (ci/test installs it as root).
set -uo pipefail
opspec="$1" plugin="$2" suite="$3"
chrome="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [ -z "$chrome" ]; then
  echo "SKIPPED: no Chromium to render the report in (Debian: apt-get install chromium)"
  exit 77
fi
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$opspec" run --load "$plugin" "$suite" --report "$out/report" -q > "$out/run.txt"
grep -q "2 passed, 2 failed" "$out/run.txt" || { echo "FAIL: unexpected run result:"; cat "$out/run.txt"; exit 1; }

dom() {  # dom URL: the DOM after the page's scripts ran
  "$chrome" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --user-data-dir="$out/profile" \
    --virtual-time-budget=2000 --dump-dom "$1" 2>/dev/null
}
status=0
check() {  # check WHAT FILE PATTERN: the DOM in FILE matches the extended regex PATTERN
  if grep -Eq "$3" "$2"; then echo "ok: $1"; else echo "FAIL: $1 (no /$3/ in the rendered page)"; status=1; fi
}
check_not() {
  if grep -Eq "$3" "$2"; then echo "FAIL: $1 (/$3/ is in the rendered page)"; status=1; else echo "ok: $1"; fi
}

dom "file://$out/report/index.html" > "$out/index.html"
check "the index lists every case" "$out/index.html" 'browser_report::diverges</a>'
check "the summary" "$out/index.html" '2 passed, 2 failed'
dom "file://$out/report/index.html#filter=break" > "$out/filtered.html"
check "the filter hides other cases" "$out/filtered.html" 'data-status="passed" style="display: none;"'
check "the filter keeps the matching case" "$out/filtered.html" \
  '<tr class="case" data-status="passed"><td class="passed">passed</td><td><a href="cases/browser_report~~breaks_once.html">browser_report::breaks_once'
check "the filter counts what it shows" "$out/filtered.html" '<span id="shown">1</span>'
dom "file://$out/report/index.html#filter=&hide=passed" > "$out/failed_only.html"
check "the status toggles" "$out/failed_only.html" '<span id="shown">2</span>'

dom "file://$out/report/cases/browser_report~~breaks_once.html" > "$out/break.html"
check "the graph is drawn as SVG" "$out/break.html" '<div class="graph-svg"><svg'
check "the SVG has the graph's nodes" "$out/break.html" '>aten::sin</text>'
check "the break's reason" "$out/break.html" 'Call to `opspec::graph_break\(\)`'
check "the break's line is marked" "$out/break.html" 'class="line break"'

dom "file://$out/report/cases/browser_report~~wrong_ops.html" > "$out/failure.html"
check "a failure is shown on top" "$out/failure.html" '<pre class="failure">expect.ops'

dom "file://$out/report/cases/browser_report~~diverges.html" > "$out/diverges.html"
check "the divergent op is marked" "$out/diverges.html" '<tr class="divergent"><td>2</td><td></td><td><code>  aten::add.Tensor'
check "both hashes are shown" "$out/diverges.html" "hash"
check_not "nothing from outside the report" "$out/diverges.html" '(src|href)="https?:'
exit $status
