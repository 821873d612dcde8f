# Listens on a NETLINK_KOBJECT_UEVENT socket (no privilege needed to join
# the multicast group) for up to 5 seconds after touching "started", and
# prints the kernel uevents it received. The kernel broadcasts uevents to
# every network namespace owned by the initial user namespace: under a root
# agent the privileged outer bubblewrap creates the run's network namespace,
# so the host's device events (disks, USB, modules, the agent's own
# actions) reach the script: a channel from the host into the sandbox.
import json, select, socket, time

s = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, 15)  # NETLINK_KOBJECT_UEVENT
s.bind((0, 1))
open("started", "w").close()
got = []
end = time.time() + 5
while time.time() < end and not got:
    r, _, _ = select.select([s], [], [], 0.2)
    if r:
        got.append(s.recv(8192).split(b"\0")[0].decode(errors="replace"))
print(json.dumps(got))
