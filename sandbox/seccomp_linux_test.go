//go:build linux

package sandbox

import (
	"encoding/binary"
	"runtime"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestUnixSocketFilter runs the filter program in a BPF interpreter over
// seccomp_data records, for the calls a real process cannot easily make
// (x32, 32-bit socketcall, io_uring). x/net/bpf loads words big-endian, the
// kernel in the machine's order: the records are written big-endian here.
func TestUnixSocketFilter(t *testing.T) {
	arches, err := filterArches()
	if err != nil {
		t.Skip(err)
	}
	prog, err := seccompFilter(true)
	if err != nil {
		t.Fatal(err)
	}
	vm := vmOf(t, prog)
	data := func(arch, nr, arg0 uint32, arg2 uint64) []byte {
		b := make([]byte, 64)
		binary.BigEndian.PutUint32(b[0:], nr)
		binary.BigEndian.PutUint32(b[4:], arch)
		binary.BigEndian.PutUint32(b[16:], arg0)
		// The filter reads the low word at 32 and the high one at 36,
		// as in memory on a little-endian machine.
		binary.BigEndian.PutUint32(b[32:], uint32(arg2))
		binary.BigEndian.PutUint32(b[36:], uint32(arg2>>32))
		return b
	}
	const allow, deny = 0x7fff0000, 0x00050000 | uint32(unix.EACCES)
	const eperm, enosys = 0x00050000 | uint32(unix.EPERM), 0x00050000 | uint32(unix.ENOSYS)
	native, compat := arches[0], arches[1]
	socketpair := map[string]uint32{"amd64": 53, "arm64": 199}[runtime.GOARCH]
	cases := []filterCase{
		{"socket(AF_UNIX)", native.arch, native.socket, unix.AF_UNIX, deny, 0},
		{"socket(AF_INET)", native.arch, native.socket, unix.AF_INET, allow, 0},
		{"socket(AF_NETLINK)", native.arch, native.socket, unix.AF_NETLINK, allow, 0},
		{"socketpair(AF_UNIX)", native.arch, socketpair, unix.AF_UNIX, allow, 0},
		{"io_uring_setup", native.arch, 425, 0, deny, 0},
		{"io_uring_enter", native.arch, 426, 0, deny, 0},
		{"io_uring_register", native.arch, 427, 0, deny, 0},
		{"read", native.arch, 0, unix.AF_UNIX, allow, 0},
		{"compat socket(AF_UNIX)", compat.arch, compat.socket, unix.AF_UNIX, deny, 0},
		{"compat socket(AF_INET)", compat.arch, compat.socket, unix.AF_INET, allow, 0},
		{"compat io_uring_setup", compat.arch, 425, 0, deny, 0},
		{"unknown architecture", 0x1234, native.socket, unix.AF_UNIX, allow, 0},
		{"prlimit(hearth, set)", native.arch, native.prlimit, 4242, eperm, 0x7ffc12345678},
		{"prlimit(hearth, set, pointer with a zero low word)", native.arch, native.prlimit, 4242, eperm, 0x7f0000000000},
		{"prlimit(hearth, get)", native.arch, native.prlimit, 4242, allow, 0},
		{"prlimit(self, set)", native.arch, native.prlimit, 0, allow, 0x7ffc12345678},
		{"compat prlimit(hearth, set)", compat.arch, compat.prlimit, 4242, eperm, 0xffd01234},
	}
	// Without the network part, only prlimit is refused.
	quiet, err := seccompFilter(false)
	if err != nil {
		t.Fatal(err)
	}
	quietVM := vmOf(t, quiet)
	for _, c := range []filterCase{
		{"network on: socket(AF_UNIX)", native.arch, native.socket, unix.AF_UNIX, allow, 0},
		{"network on: io_uring_setup", native.arch, 425, 0, allow, 0},
		{"network on: prlimit(hearth, set)", native.arch, native.prlimit, 4242, eperm, 0x7ffc12345678},
	} {
		if got, err := quietVM.Run(data(c.arch, c.nr, c.arg, c.arg2)); err != nil || uint32(got) != c.want {
			t.Errorf("%s: got %#x (%v), want %#x", c.name, got, err, c.want)
		}
	}
	if native.denyX32 {
		cases = append(cases,
			filterCase{"x32 socket(AF_UNIX)", native.arch, x32SyscallBit | native.socket, unix.AF_UNIX, enosys, 0},
			filterCase{"x32 read", native.arch, x32SyscallBit, 0, enosys, 0})
	}
	if compat.socketcall != 0 {
		cases = append(cases, filterCase{"compat socketcall", compat.arch, compat.socketcall, 1, deny, 0})
	}
	for _, c := range cases {
		got, err := vm.Run(data(c.arch, c.nr, c.arg, c.arg2))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if uint32(got) != c.want {
			t.Errorf("%s: got %#x, want %#x", c.name, got, c.want)
		}
	}
}

type filterCase struct {
	name          string
	arch, nr, arg uint32
	want          uint32
	arg2          uint64
}

// vmOf loads a filter into x/net/bpf's interpreter.
func vmOf(t *testing.T, prog []unix.SockFilter) *bpf.VM {
	t.Helper()
	raw := make([]bpf.RawInstruction, len(prog))
	for i, in := range prog {
		raw[i] = bpf.RawInstruction{Op: in.Code, Jt: in.Jt, Jf: in.Jf, K: in.K}
	}
	insts, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("the filter does not disassemble")
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatal(err)
	}
	return vm
}
