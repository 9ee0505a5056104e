//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// When the network is off, a confined process may not make a Unix socket.
//
// A network namespace (or Landlock's TCP rules) stops TCP and UDP, and a
// new network namespace or Landlock's scope stops abstract Unix sockets;
// but a pathname Unix socket is reached through the filesystem, and on
// kernels before Landlock's resolve-unix right (this is most of them)
// nothing else stops a command from connecting to any listening socket it
// can name: a local proxy, a user's agent, another program's control
// socket, any of which can carry a secret away. A seccomp filter refuses
// socket(AF_UNIX, …) with EACCES. socketpair(2), which only connects a
// process to itself, stays allowed, and so does every other family (which
// the network namespace or Landlock already confines).
//
// io_uring is refused with it: its IORING_OP_SOCKET and IORING_OP_CONNECT
// make sockets without the socket(2) call a filter can see.

// Audit architectures and syscall numbers the filter knows (linux/audit.h,
// the kernel's syscall tables).
const (
	auditArchX86_64  = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAarch64 = 0xc00000b7
	auditArchARM     = 0x40000028

	x32SyscallBit = 0x40000000

	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000
)

// socketFilterArch is one architecture's syscall numbers: socket(2), the
// multiplexed socketcall(2) where it exists (its arguments are behind a
// pointer the filter cannot read, so it is refused whole), and io_uring.
type socketFilterArch struct {
	arch       uint32
	socket     uint32
	socketcall uint32 // 0: none on this architecture
	uring      [3]uint32
	denyX32    bool
}

// errNoSocketFilter: the filter does not know this architecture.
var errNoSocketFilter = errors.New("no Unix socket filter")

// filterArches lists the native architecture first, then the compat one
// its kernel also runs (32-bit programs).
func filterArches() ([]socketFilterArch, error) {
	uring := [3]uint32{425, 426, 427} // io_uring_setup, _enter, _register: the same on every table since 5.1
	switch runtime.GOARCH {
	case "amd64":
		return []socketFilterArch{
			{arch: auditArchX86_64, socket: 41, uring: uring, denyX32: true},
			{arch: auditArchI386, socket: 359, socketcall: 102, uring: uring},
		}, nil
	case "arm64":
		return []socketFilterArch{
			{arch: auditArchAarch64, socket: 198, uring: uring},
			{arch: auditArchARM, socket: 281, uring: uring},
		}, nil
	}
	return nil, fmt.Errorf("%w for %s", errNoSocketFilter, runtime.GOARCH)
}

// unixSocketFilter builds the classic BPF program.
func unixSocketFilter() ([]unix.SockFilter, error) {
	arches, err := filterArches()
	if err != nil {
		return nil, err
	}
	const (
		offNr   = 0  // offsetof(struct seccomp_data, nr)
		offArch = 4  // offsetof(struct seccomp_data, arch)
		offArg0 = 16 // offsetof(struct seccomp_data, args[0]), low 32 bits (little-endian)
	)
	ld := func(k uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: k}
	}
	ret := func(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }
	// jeq jumps over skip instructions when A != k.
	jne := func(k uint32, skip uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: 0, Jf: skip}
	}
	deny := ret(seccompRetErrno | uint32(unix.EACCES))
	allow := ret(seccompRetAllow)

	var prog []unix.SockFilter
	for _, a := range arches {
		// One block per architecture: load arch; if it is not this one,
		// jump to the next block.
		var block []unix.SockFilter
		block = append(block, ld(offNr))
		if a.denyX32 {
			// x32 calls are the same numbers with a high bit: refuse
			// them all rather than list them twice (nothing uses x32).
			block = append(block, unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, K: x32SyscallBit, Jt: 0, Jf: 1}, deny)
		}
		for _, nr := range a.uring {
			block = append(block, jne(nr, 1), deny)
		}
		if a.socketcall != 0 {
			block = append(block, jne(a.socketcall, 1), deny)
		}
		// socket(AF_UNIX, …): refuse; any other call or family: allow.
		block = append(block, jne(a.socket, 3), ld(offArg0), jne(unix.AF_UNIX, 1), deny, allow)
		prog = append(prog, ld(offArch), jne(a.arch, uint8(len(block))))
		prog = append(prog, block...)
	}
	// An architecture the filter does not know cannot occur on this
	// kernel; allow, as the filter's only job is Unix sockets.
	prog = append(prog, allow)
	return prog, nil
}

// denyUnixSockets installs the filter on every thread of this process
// (and so on everything it starts). It needs no_new_privs, which Landlock
// set, or CAP_SYS_ADMIN.
func denyUnixSockets() error {
	prog, err := unixSocketFilter()
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %v", err)
	}
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: %v", errno)
	}
	return nil
}
