#!/usr/bin/env python3
"""Canaries of check_generated.py's stamp check: the documents with their stamps made dirty, or clean.

  bench_stamp_canary.py dirty|clean

Copies the files bench/report.py writes regions into (REGIONS) to a temporary folder, rewrites
every stamp there to say "commit HASH (+ uncommitted changes)" (dirty) or to drop that mark
(clean), and runs check_generated.py on the copy, passing its output and exit
status on. `dirty` must fail for the dirty stamps (bench_dirty_stamp_is_refused, through
expect_failure.sh); `clean` must pass (bench_clean_stamp_is_accepted): the stamp check refuses
the mark and nothing else, whatever stamps the checkout's documents carry today.
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("dirty", "clean"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import report  # noqa: E402
    mark = " " + report.DIRTY
    with tempfile.TemporaryDirectory(prefix="emcp-stamps-") as tmp:
        changed = 0
        for rel in report.REGIONS:
            with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
                text = fh.read()

            def restamp(m):
                return m.group(0).replace(mark, "") + (mark if sys.argv[1] == "dirty" else "")
            text, n = re.subn(report.STAMP_COMMIT_RE, restamp, text)
            changed += n
            os.makedirs(os.path.dirname(os.path.join(tmp, rel)) or tmp, exist_ok=True)
            with open(os.path.join(tmp, rel), "w", encoding="utf-8") as fh:
                fh.write(text)
        if changed == 0:
            print("bench_stamp_canary: no stamp found in the documents (STAMP_COMMIT_RE of bench/report.py)")
            return 1
        print(f"bench_stamp_canary: {changed} stamp(s) made {sys.argv[1]} in a copy of the documents")
        res = subprocess.run([sys.executable, os.path.join(HERE, "check_generated.py"), "--root", tmp])
        return res.returncode


if __name__ == "__main__":
    sys.exit(main())
