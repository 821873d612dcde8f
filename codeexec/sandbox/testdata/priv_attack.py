"""Attack: look for any privilege the sandbox left, then wait so the host
can inspect this process and the file it wrote.

argv[1]: a file (relative to the cwd) whose appearance lets the script end.
Prints one JSON object, then writes owned-by.txt and waits (at most 20 s).
"""
import ctypes
import errno
import json
import os
import sys
import time

status = dict(line.rstrip("\n").split(":\t", 1) for line in open("/proc/self/status") if ":\t" in line)
out = {k: status.get(k, "") for k in ("Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs")}
out["uid_map"] = open("/proc/self/uid_map").read().split()

libc = ctypes.CDLL(None, use_errno=True)


def call(f, *args):
    return "ok" if f(*args) == 0 else "denied: " + errno.errorcode.get(ctypes.get_errno(), "?")


CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
out["setuid(0)"] = call(libc.setuid, 0)
out["setgid(0)"] = call(libc.setgid, 0)
out["unshare(user)"] = call(libc.unshare, CLONE_NEWUSER)
out["unshare(mount)"] = call(libc.unshare, CLONE_NEWNS)
out["unshare(net)"] = call(libc.unshare, CLONE_NEWNET)
open("owned-by.txt", "w").write("who owns me?")
try:
    os.chown("owned-by.txt", 0, 0)
    out["chown to root"] = "ok"
except OSError as e:
    out["chown to root"] = "denied: " + errno.errorcode.get(e.errno, "?")
print(json.dumps(out), flush=True)

deadline = time.time() + 20
while not os.path.exists(sys.argv[1]) and time.time() < deadline:
    time.sleep(0.02)
