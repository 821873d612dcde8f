"""Attack: read the host's private files, write outside the workspace,
remount the read-only file systems read-write, write to the host's /etc.

argv[1]: a token naming the files this script tries to create in /etc and /tmp.
argv[2:]: host paths to read (a test's temp file, files in the agent's home).
Prints one JSON object.
"""
import ctypes
import errno
import json
import os
import sys

token, secrets = sys.argv[1], sys.argv[2:]


def attempt(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return "denied: " + errno.errorcode.get(e.errno, str(e.errno))


out = {
    "read": {p: attempt(lambda p=p: open(p, "rb").read()) for p in secrets},
    "exists": {p: os.path.lexists(p) for p in secrets},
}

# Every mount point, and the usual suspects: where can we create a file?
mounts = [line.split()[4] for line in open("/proc/self/mountinfo")]
candidates = set(mounts) | {"/", "/etc", "/usr", "/usr/local", "/usr/bin", "/root", "/home", "/var",
                            "/dev", "/dev/shm", "/proc/sys/kernel", os.environ["HOME"],
                            os.environ["TMPDIR"], os.getcwd()}
writable = []
for d in sorted(candidates):
    p = os.path.join(d, ".adkskills-write-probe-" + token)
    try:
        with open(p, "w") as f:
            f.write("x")
        os.remove(p)
        writable.append(d)
    except OSError:
        pass
out["writable"] = writable
# Every mount: [mount point, mount options, the mounted directory of its file system].
out["mounts"] = [[f[4], f[5], f[3]] for f in (line.split() for line in open("/proc/self/mountinfo"))]

libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096


def mount(source, target, fstype, flags):
    r = libc.mount(source, target, fstype, ctypes.c_ulong(flags), None)
    return "ok" if r == 0 else "denied: " + errno.errorcode.get(ctypes.get_errno(), "?")


out["remount"] = {
    "/": mount(None, b"/", None, MS_REMOUNT | MS_BIND),
    "/usr": mount(None, b"/usr", None, MS_REMOUNT | MS_BIND),
    "/etc": mount(None, b"/etc", None, MS_REMOUNT | MS_BIND),
    "tmpfs on /etc": mount(b"none", b"/etc", b"tmpfs", 0),
}
out["write /etc"] = attempt(lambda: open("/etc/adkskills-escape-" + token, "w").write("escaped"))
out["write /tmp"] = attempt(lambda: open("/tmp/adkskills-private-" + token, "w").write("private"))
print(json.dumps(out))
