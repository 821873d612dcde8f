# Reads the kernel's key lists, which need no system call the filter denies:
# /proc/keys names every key the reader may view (the type, description,
# owner, permissions and payload size), /proc/key-users the key counts of
# each user. Under an unprivileged agent the script runs as the agent's uid,
# and a key of that uid with the default "user may view" permission is
# listed, possessed or not: the names of the agent's secrets (and their
# lengths) leak, even though keyctl(2) itself answers ENOSYS.
import json

out = {}
for f in ("/proc/keys", "/proc/key-users"):
    try:
        out[f] = open(f).read()
    except OSError as e:
        out[f] = "error: %s" % e
print(json.dumps(out))
