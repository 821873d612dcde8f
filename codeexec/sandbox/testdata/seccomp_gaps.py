# Calls that Docker's default seccomp profile denies (or, for open_tree_attr,
# a mount call: open_tree with mount_setattr's attributes, Linux 6.15) and
# that the sandbox's filter leaves open. Prints name -> 0 or the errno; the
# filter's own answer is ENOSYS.
#
# - personality(ADDR_NO_RANDOMIZE): turns ASLR off for every program the
#   script runs next (Docker allows only 0, 8, 0x20000, 0x20008, 0xffffffff);
# - the NUMA memory-policy calls (Docker: only with CAP_SYS_NICE);
# - open_tree_attr: the mount API the filter otherwise denies.
import ctypes, json, os

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
calls = {  # x86_64 numbers
    "personality": (135, (0x0040000,)),             # ADDR_NO_RANDOMIZE
    "mbind": (237, (0, 0, 0, 0, 0, 0)),
    "set_mempolicy": (238, (0, 0, 0)),              # MPOL_DEFAULT
    "get_mempolicy": (239, (0, 0, 0, 0, 0)),
    "migrate_pages": (256, (0, 0, 0, 0)),
    "move_pages": (279, (0, 0, 0, 0, 0, 0)),
    "set_mempolicy_home_node": (450, (0, 0, 0, 0)),
    "open_tree_attr": (467, (-100, "/workspace", 0x80000, 0, 0)),  # AT_FDCWD, O_CLOEXEC
}
out = {}
for name, (nr, args) in calls.items():
    a = [ctypes.c_char_p(v.encode()) if isinstance(v, str) else ctypes.c_long(v) for v in args]
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *a)
    out[name] = ctypes.get_errno() if r == -1 else 0
out["personality_after"] = open("/proc/self/personality").read().strip()
print(json.dumps(out))
