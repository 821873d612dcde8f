package sandbox

import (
	"encoding/binary"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompVerdict runs the filter on one call, in x/net/bpf's interpreter,
// and returns the kernel action it gives.
func seccompVerdict(t *testing.T, vm *bpf.VM, archID uint32, nr uint32, args ...uint64) uint32 {
	t.Helper()
	// struct seccomp_data: nr, arch, instruction_pointer, args[6]. The VM
	// loads words big-endian; the filter reads a 64-bit argument as two
	// words in the machine's order, so each word is stored big-endian at
	// the offset the machine would give it.
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[0:], nr)
	binary.BigEndian.PutUint32(data[4:], archID)
	lo, hi := 0, 4
	if !littleEndian() {
		lo, hi = 4, 0
	}
	for i, a := range args {
		off := 16 + 8*i
		binary.BigEndian.PutUint32(data[off+lo:], uint32(a))
		binary.BigEndian.PutUint32(data[off+hi:], uint32(a>>32))
	}
	v, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

func littleEndian() bool {
	return binary.NativeEndian.Uint16([]byte{1, 0}) == 1
}

// TestSeccompDecisions checks the filter's answer for each kind of rule,
// allowed and refused, without a kernel.
func TestSeccompDecisions(t *testing.T) {
	prog, err := seccompProgram()
	if err != nil {
		t.Fatal(err)
	}
	var insns []bpf.RawInstruction
	for i := 0; i < len(prog); i += 8 {
		insns = append(insns, bpf.RawInstruction{
			Op: binary.NativeEndian.Uint16(prog[i:]), Jt: prog[i+2], Jf: prog[i+3], K: binary.NativeEndian.Uint32(prog[i+4:]),
		})
	}
	decoded, ok := bpf.Disassemble(insns)
	if !ok {
		t.Fatal("the program does not disassemble")
	}
	vm, err := bpf.NewVM(decoded)
	if err != nil {
		t.Fatal(err)
	}
	info, err := arch.GetInfo("")
	if err != nil {
		t.Fatal(err)
	}
	nr := func(name string) uint32 {
		n, ok := info.SyscallNames[name]
		if !ok {
			t.Skipf("%s has no %s", info.Name, name)
		}
		return uint32(n)
	}
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		noaf   = unix.SECCOMP_RET_ERRNO | uint32(unix.EAFNOSUPPORT)
	)
	id := uint32(info.ID)
	top := highestKnown(info)
	tests := []struct {
		name string
		arch uint32
		nr   string
		raw  uint32 // the call number when nr is ""
		args []uint64
		want uint32
	}{
		{"read", id, "read", 0, nil, allow},
		{"mount", id, "mount", 0, nil, enosys},
		{"open_tree_attr", id, "open_tree_attr", 0, nil, enosys},
		{"mbind", id, "mbind", 0, nil, enosys},
		{"keyctl", id, "keyctl", 0, nil, enosys},
		{"another architecture", id ^ 1, "read", 0, nil, enosys},
		{"a number above the table", id, "", top + 1, nil, enosys},
		{"x32's read", id, "", 0x40000000, nil, enosys},
		{"clone without namespaces", id, "clone", 0, []uint64{uint64(unix.SIGCHLD) | unix.CLONE_VM}, allow},
		{"clone with a user namespace", id, "clone", 0, []uint64{uint64(unix.SIGCHLD) | unix.CLONE_NEWUSER}, enosys},
		{"personality query", id, "personality", 0, []uint64{0xffffffff}, allow},
		{"personality PER_LINUX", id, "personality", 0, []uint64{0}, allow},
		{"personality ADDR_NO_RANDOMIZE", id, "personality", 0, []uint64{0x0040000}, enosys}, // ASLR off
		{"personality with high bits", id, "personality", 0, []uint64{1<<32 | 0x8}, enosys},
		{"socket AF_INET", id, "socket", 0, []uint64{unix.AF_INET, unix.SOCK_STREAM}, allow},
		{"socket AF_NETLINK", id, "socket", 0, []uint64{unix.AF_NETLINK}, allow},
		{"socket AF_VSOCK", id, "socket", 0, []uint64{unix.AF_VSOCK}, noaf},
		{"socket AF_INET with high bits", id, "socket", 0, []uint64{1<<32 | unix.AF_INET}, noaf},
		{"socketpair AF_UNIX", id, "socketpair", 0, []uint64{unix.AF_UNIX}, allow},
		{"socketpair AF_INET", id, "socketpair", 0, []uint64{unix.AF_INET}, noaf},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.raw
			if tt.nr != "" {
				n = nr(tt.nr)
			}
			if got := seccompVerdict(t, vm, tt.arch, n, tt.args...); got != tt.want {
				t.Errorf("call %d%v: action %#x, want %#x", n, tt.args, got, tt.want)
			}
		})
	}
}
