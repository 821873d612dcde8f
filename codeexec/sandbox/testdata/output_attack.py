"""Attack: smuggle host files out through the output files.

argv[1:]: host paths to link to (a test's temp file; /etc/passwd).
Plants symbolic links to each, tries hard links to each, writes real.txt.
Prints one JSON object with the hard-link outcomes.
"""
import errno
import json
import os
import sys

out = {}
for i, target in enumerate(sys.argv[1:]):
    os.symlink(target, "symlink-%d" % i)
    try:
        os.link(target, "hardlink-%d" % i)
        out[target] = "ok"
    except OSError as e:
        out[target] = "denied: " + errno.errorcode.get(e.errno, "?")
os.symlink("/", "root")
open("real.txt", "w").write("real")
print(json.dumps(out))
