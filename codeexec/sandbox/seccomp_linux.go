package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The sandbox's seccomp filter: the system calls no skill script needs and
// every sandbox escape or kernel exploit reaches for. Docker's default
// profile is the anchor. The list is a denylist (the rest of the kernel's
// interface stays, so interpreters and their native modules work) with a
// ceiling: a call numbered above the last one the filter was written
// against is refused too, so a kernel's new calls stay shut until they are
// reviewed. A few calls are refused for some arguments only (clone with
// namespace flags, personality, socket families). The filter is installed
// by the innermost bubblewrap right before the script's first exec.
//
// A denied call fails with ENOSYS, as if the kernel did not have it. No
// kernel answers ENOSYS for these calls on its own, so a script (and a test)
// can tell the filter's answer from the kernel's; and the software that
// probes for a feature (io_uring, userfaultfd, clone3, keyrings) falls back
// on ENOSYS, where EPERM can be taken for a hard error. A socket of a
// refused family fails with EAFNOSUPPORT, as on a kernel without it.

// deniedSyscalls are refused outright, by name (a name the architecture
// does not have is left out).
var deniedSyscalls = []string{
	// Keyrings: the agent's session keyring, and keys that outlive the run.
	"keyctl", "add_key", "request_key",
	// Other processes' memory and control.
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp",
	// Mounts, old and new API, and the root.
	"mount", "umount2", "umount", "pivot_root", "chroot", "open_tree", "open_tree_attr", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
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
	// NUMA memory policy (Docker: CAP_SYS_NICE only).
	"mbind", "set_mempolicy", "get_mempolicy", "migrate_pages", "move_pages", "set_mempolicy_home_node",
}

// allowedPersonas are the only personality(2) arguments allowed, Docker's:
// PER_LINUX, PER_LINUX32, UNAME26 alone and with PER_LINUX32, and the
// query (0xffffffff, also sign-extended). Any other persona, among them
// ADDR_NO_RANDOMIZE (which turns ASLR off for what the script runs next),
// is denied.
var allowedPersonas = []uint64{0x0, 0x8, 0x20000, 0x20008, 0xffffffff, 0xffffffffffffffff}

// allowedFamilies are the socket address families a script may use
// (socket(2)'s first argument): Unix sockets, IPv4, IPv6 (the private
// loopback, or the network when enabled) and netlink (interface and route
// queries). The others are refused with EAFNOSUPPORT, as a kernel without
// them would: among them AF_VSOCK, which no network namespace isolates (it
// reaches the hypervisor of a VM), and the rarely used families that load
// kernel modules on demand. socketpair(2) makes only Unix sockets.
var allowedFamilies = []uint64{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}

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
	noFamily := seccomp.Action(unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT))
	known := func(names ...string) []string {
		return slices.DeleteFunc(names, func(n string) bool { _, ok := info.SyscallNames[n]; return !ok })
	}
	conditional := func(action seccomp.Action, rules ...seccomp.NameWithConditions) seccomp.SyscallGroup {
		return seccomp.SyscallGroup{Action: action, NamesWithCondtions: slices.DeleteFunc(rules, func(r seccomp.NameWithConditions) bool {
			return len(known(r.Name)) == 0
		})}
	}
	policy := seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Action: deny, Names: known(slices.Clone(deniedSyscalls)...)},
			conditional(deny,
				seccomp.NameWithConditions{Name: "clone", Conditions: seccomp.ArgumentConditions{{Argument: cloneFlagsArg(), Operation: seccomp.BitsSet, Value: cloneNamespaceFlags}}},
				seccomp.NameWithConditions{Name: "personality", Conditions: noneOf(0, allowedPersonas)}),
			conditional(noFamily,
				seccomp.NameWithConditions{Name: "socket", Conditions: noneOf(0, allowedFamilies)},
				seccomp.NameWithConditions{Name: "socketpair", Conditions: noneOf(0, []uint64{unix.AF_UNIX})}),
		},
	}
	insns, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("seccomp: %w", err)
	}
	raw, err := bpf.Assemble(append(seccompPrefix(uint32(info.ID), highestKnown(info)), insns...))
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

// seccompPrefix is what the filter checks before the library's rules. The
// library lets a call of another architecture through (its arch check
// jumps to the default action): a 32-bit call from a 64-bit process (int
// 0x80 on x86_64) would skip every rule, so every call not of this
// architecture is refused. So is every call numbered above highest, the
// last this filter was written against: a denylist cannot know a call
// newer than itself (a new mount call, say), and software probing for one
// falls back on ENOSYS. That also refuses x86_64's x32 calls, whose
// numbers carry bit 30.
func seccompPrefix(archID, highest uint32) []bpf.Instruction {
	enosys := bpf.RetConstant{Val: unix.SECCOMP_RET_ERRNO | uint32(deniedErrno)}
	return []bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: archID, SkipTrue: 1},
		enosys,
		bpf.LoadAbsolute{Off: 0, Size: 4}, // seccomp_data.nr
		bpf.JumpIf{Cond: bpf.JumpGreaterThan, Val: highest, SkipFalse: 1},
		enosys,
	}
}

// highestKnown is the highest call number of the architecture's table.
func highestKnown(info *arch.Info) uint32 {
	var hi int
	for nr := range info.SyscallNumbers {
		hi = max(hi, nr)
	}
	return uint32(hi)
}

// noneOf matches a call whose argument arg is none of values (all 64
// bits compared: a value with stray high bits matches too, and is refused).
func noneOf(arg uint32, values []uint64) seccomp.ArgumentConditions {
	c := make(seccomp.ArgumentConditions, 0, len(values))
	for _, v := range values {
		c = append(c, seccomp.Condition{Argument: arg, Operation: seccomp.NotEqual, Value: v})
	}
	return c
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
