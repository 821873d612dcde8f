"""Attack: reach the host's network from inside the sandbox.

argv: targets, each host:port (TCP; [v6]:port for IPv6) or @name (an
abstract Unix socket, which lives in the network namespace).
Prints one JSON object: the interfaces this process can see and, per
target, "connected" or "blocked: <reason>".
"""
import json
import os
import socket
import sys

out = {"interfaces": sorted(
    line.split(":")[0].strip()
    for line in open("/proc/net/dev").read().splitlines()[2:] if ":" in line)}
try:
    out["sys_class_net"] = sorted(os.listdir("/sys/class/net"))
except OSError as e:
    out["sys_class_net"] = "unreadable: " + os.strerror(e.errno)

results = {}
for target in sys.argv[1:]:
    try:
        if target.startswith("@"):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            addr = "\0" + target[1:]
        else:
            host, port = target.rsplit(":", 1)
            host = host.strip("[]")
            s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
            addr = (host, int(port))
        s.settimeout(3)
        s.connect(addr)
        s.sendall(b"escaped\n")
        s.close()
        results[target] = "connected"
    except OSError as e:
        results[target] = "blocked: " + (os.strerror(e.errno) if e.errno else str(e))
out["targets"] = results
print(json.dumps(out))
