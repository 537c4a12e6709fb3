#!/usr/bin/env python3
"""Reads `go test -json` on stdin and prints what a reader of CI's log needs: each
package's closing line (ok/FAIL/no test files), the whole output of every failed test,
and every skipped test with its reason, listed again at the end."""
import json
import sys

buf = {}
skipped = []
for line in sys.stdin:
    try:
        ev = json.loads(line)
    except ValueError:
        print(line, end="")  # build errors and anything else go test prints as text
        continue
    pkg, test, action = ev.get("Package", ""), ev.get("Test"), ev.get("Action")
    if test is None:
        if action == "output":
            print(ev["Output"], end="")
        continue
    key = (pkg, test)
    if action == "output":
        buf.setdefault(key, []).append(ev["Output"])
    elif action == "fail":
        print("".join(buf.pop(key, [])), end="")
    elif action == "skip":
        out = [o for o in buf.pop(key, []) if not o.startswith(("=== ", "--- SKIP"))]
        skipped.append("%s %s: %s" % (pkg, test, " ".join(o.strip() for o in out) or "(no reason given)"))
    elif action == "pass":
        buf.pop(key, None)
    sys.stdout.flush()

print("\n=== skipped tests: %d ===" % len(skipped))
for s in skipped:
    print("SKIP " + s)
