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
	prog, err := unixSocketFilter()
	if err != nil {
		t.Fatal(err)
	}
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
	data := func(arch, nr, arg0 uint32) []byte {
		b := make([]byte, 64)
		binary.BigEndian.PutUint32(b[0:], nr)
		binary.BigEndian.PutUint32(b[4:], arch)
		binary.BigEndian.PutUint32(b[16:], arg0)
		return b
	}
	const allow, deny = 0x7fff0000, 0x00050000 | uint32(unix.EACCES)
	native, compat := arches[0], arches[1]
	socketpair := map[string]uint32{"amd64": 53, "arm64": 199}[runtime.GOARCH]
	cases := []filterCase{
		{"socket(AF_UNIX)", native.arch, native.socket, unix.AF_UNIX, deny},
		{"socket(AF_INET)", native.arch, native.socket, unix.AF_INET, allow},
		{"socket(AF_NETLINK)", native.arch, native.socket, unix.AF_NETLINK, allow},
		{"socketpair(AF_UNIX)", native.arch, socketpair, unix.AF_UNIX, allow},
		{"io_uring_setup", native.arch, 425, 0, deny},
		{"io_uring_enter", native.arch, 426, 0, deny},
		{"io_uring_register", native.arch, 427, 0, deny},
		{"read", native.arch, 0, unix.AF_UNIX, allow},
		{"compat socket(AF_UNIX)", compat.arch, compat.socket, unix.AF_UNIX, deny},
		{"compat socket(AF_INET)", compat.arch, compat.socket, unix.AF_INET, allow},
		{"compat io_uring_setup", compat.arch, 425, 0, deny},
		{"unknown architecture", 0x1234, native.socket, unix.AF_UNIX, allow},
	}
	if native.denyX32 {
		cases = append(cases,
			filterCase{"x32 socket(AF_UNIX)", native.arch, x32SyscallBit | native.socket, unix.AF_UNIX, deny},
			filterCase{"x32 read", native.arch, x32SyscallBit, 0, deny})
	}
	if compat.socketcall != 0 {
		cases = append(cases, filterCase{"compat socketcall", compat.arch, compat.socketcall, 1, deny})
	}
	for _, c := range cases {
		got, err := vm.Run(data(c.arch, c.nr, c.arg))
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
}
