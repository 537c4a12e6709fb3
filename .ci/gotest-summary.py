#!/usr/bin/env python3
"""Reads `go test -json` on stdin and prints what a reader of CI's log needs: each
package's closing line (ok/FAIL/no test files), the whole output of every failed test,
and every skipped test with its reason, listed again at the end.

A log is often read from its end, so the failures come last, shortly: each failed
test's last lines, and each test that never ended (its package's binary panicked,
timed out or was killed under it) with its last lines, which is where the reason is,
and the first lines of a package's own panic (a timeout names the tests running)."""
import json
import sys

TAIL = 25  # lines of each failure repeated at the end

buf = {}
skipped = []
failures = []  # (title, lines)
pkg_panic = {}  # package -> the lines of its own panic, as printed
for line in sys.stdin:
    try:
        ev = json.loads(line)
    except ValueError:
        print(line, end="")  # build errors and anything else go test prints as text
        continue
    pkg, test, action = ev.get("Package", ""), ev.get("Test"), ev.get("Action")
    if test is None:
        if action == "output":
            out = ev["Output"]
            print(out, end="")
            if out.startswith("panic:") or pkg in pkg_panic:
                lines = pkg_panic.setdefault(pkg, [])
                if len(lines) < TAIL:
                    lines.append(out)
        continue
    key = (pkg, test)
    if action == "output":
        buf.setdefault(key, []).append(ev["Output"])
    elif action == "fail":
        out = buf.pop(key, [])
        print("".join(out), end="")
        failures.append(("failed: %s %s" % key, out[-TAIL:]))
    elif action == "skip":
        out = [o for o in buf.pop(key, []) if not o.startswith(("=== ", "--- SKIP"))]
        skipped.append("%s %s: %s" % (pkg, test, " ".join(o.strip() for o in out) or "(no reason given)"))
    elif action == "pass":
        buf.pop(key, None)
    sys.stdout.flush()

# Output still buffered belongs to tests that never passed, failed or skipped.
for (pkg, test), out in buf.items():
    if any(not o.startswith("=== ") for o in out):
        failures.append(("never ended: %s %s" % (pkg, test), out[-TAIL:]))
for pkg, lines in pkg_panic.items():
    failures.append(("package %s stopped" % pkg, lines))

print("\n=== skipped tests: %d ===" % len(skipped))
for s in skipped:
    print("SKIP " + s)

if failures:
    print("\n=== failures, last lines of each: %d ===" % len(failures))
    for title, lines in failures:
        print("--- " + title)
        print("".join(lines), end="")
