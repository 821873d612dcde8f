# Lists the descriptors the script holds above stderr and tries to read
# each: the agent's descriptors (a file it inherited without close-on-exec)
# must not reach a script.
import json, os

fds = {}
for name in sorted(os.listdir("/proc/self/fd"), key=int):
    fd = int(name)
    if fd <= 2:
        continue
    try:
        target = os.readlink("/proc/self/fd/" + name)
    except OSError:
        continue  # the listing's own descriptor, already closed
    if target.startswith("/proc/") and target.endswith("/fd"):
        continue  # the listing itself
    try:
        data = os.pread(fd, 64, 0).decode("utf-8", "replace")
    except OSError as e:
        data = "unreadable: " + e.strerror
    fds[name] = {"target": target, "data": data}
print(json.dumps(fds))
