# Opens an AF_VSOCK socket. Virtual sockets are not network-namespaced: the
# sandbox's private network namespace does not stop a vsock socket from
# connecting to the hypervisor (CID 2: on a cloud or Firecracker VM, its
# agent's and the host's vsock services), to sibling VMs the host routes, or
# to the guest's own vsock listeners where loopback vsock is built in (a
# Kata agent, a VM's control API). The script only creates the socket: it
# does not connect anywhere. Prints {"socket": "created"} or the errno.
import json, socket

try:
    s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    s.close()
    print(json.dumps({"socket": "created"}))
except OSError as e:
    print(json.dumps({"socket": e.errno}))
