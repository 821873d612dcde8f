# Prints every command line and environment the script can read in /proc:
# none may name a host path of the agent's (its workspace directory).
import json, os

seen = {}
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    for what in ("cmdline", "environ"):
        try:
            data = open("/proc/%s/%s" % (pid, what), "rb").read()
        except OSError:
            continue
        seen["%s/%s" % (pid, what)] = data.replace(b"\0", b" ").decode("utf-8", "replace")
print(json.dumps(seen))
