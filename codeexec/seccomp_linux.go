package codeexec

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The sandbox's seccomp filter: the system calls no skill script needs and
// every sandbox escape or kernel exploit reaches for. Docker's default
// profile is the anchor; the list is a denylist (the rest of the kernel's
// interface stays, so interpreters and their native modules work), and the
// filter is installed by the innermost bubblewrap right before the script's
// first exec.
//
// A denied call fails with ENOSYS, as if the kernel did not have it. No
// kernel answers ENOSYS for these calls on its own, so a script (and a test)
// can tell the filter's answer from the kernel's; and the software that
// probes for a feature (io_uring, userfaultfd, clone3, keyrings) falls back
// on ENOSYS, where EPERM can be taken for a hard error.

// deniedSyscalls are refused outright, by name (a name the architecture
// does not have is left out).
var deniedSyscalls = []string{
	// Keyrings: the agent's session keyring, and keys that outlive the run.
	"keyctl", "add_key", "request_key",
	// Other processes' memory and control.
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp",
	// Mounts, old and new API, and the root.
	"mount", "umount2", "umount", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	// Namespaces (clone with namespace flags is below; clone3 cannot be
	// inspected, so it is refused and glibc falls back to clone).
	"unshare", "setns", "clone3",
	// Kernel attack surface an unprivileged process can reach.
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
	// Handles that bypass path checks ("shocker").
	"name_to_handle_at", "open_by_handle_at",
	// Kernels, modules, the machine.
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "create_module",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "vhangup",
	"settimeofday", "stime", "clock_settime", "clock_adjtime",
	"iopl", "ioperm", "lookup_dcookie", "nfsservctl", "uselib", "ustat", "sysfs", "_sysctl", "get_kernel_syms", "query_module",
}

// cloneNamespaceFlags are the clone(2) flags that create namespaces.
const cloneNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// deniedErrno is what a denied call returns.
const deniedErrno = unix.ENOSYS

// seccompProgram is the filter as struct sock_filter instructions in the
// machine's byte order, built once.
var seccompProgram = sync.OnceValues(buildSeccomp)

// buildSeccomp assembles the filter for this machine's architecture.
func buildSeccomp() ([]byte, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	deny := seccomp.Action(unix.SECCOMP_RET_ERRNO | uint32(deniedErrno))
	var names []string
	for _, n := range deniedSyscalls {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: deny, Names: names},
			{Action: deny, NamesWithCondtions: []seccomp.NameWithConditions{{
				Name:       "clone",
				Conditions: seccomp.ArgumentConditions{{Argument: cloneFlagsArg(), Operation: seccomp.BitsSet, Value: cloneNamespaceFlags}},
			}}},
		},
	}
	insns, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	// The library lets a call of another architecture through (its arch
	// check jumps to the default action): a 32-bit call from a 64-bit
	// process (int 0x80 on x86_64) would skip every rule. Refuse every
	// call that is not of this architecture before anything else.
	prefix := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(deniedErrno)},
	}
	raw, err := bpf.Assemble(append(prefix, insns...))
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	if len(raw) > unix.BPF_MAXINSNS {
		return nil, fmt.Errorf("seccomp: %d instructions, over the kernel's %d", len(raw), unix.BPF_MAXINSNS)
	}
	out := make([]byte, 0, 8*len(raw))
	for _, in := range raw {
		out = binary.NativeEndian.AppendUint16(out, in.Op)
		out = append(out, in.Jt, in.Jf)
		out = binary.NativeEndian.AppendUint32(out, in.K)
	}
	return out, nil
}

// cloneFlagsArg is the argument of clone(2) that holds the flags: the first
// everywhere but on s390x, whose first two arguments are swapped.
func cloneFlagsArg() uint32 {
	if runtime.GOARCH == "s390x" {
		return 1
	}
	return 0
}

// seccompFile returns a fresh file to read the filter from: a pipe holding
// the whole program, whose write end is already closed (the program is far
// below a pipe's capacity).
func seccompFile() (*os.File, error) {
	prog, err := seccompProgram()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	_, err = w.Write(prog)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	return r, nil
}
