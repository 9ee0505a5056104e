//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A seccomp filter closes what neither Landlock nor the namespaces close on
// the kernels Hearth runs on. It has two parts:
//
// Always: prlimit(2) on another process is refused (EPERM). The kernel lets
// a process change the limits of any process with the same user ids, so a
// command could lower Hearth's own (its open files, its memory) from inside
// the sandbox and make it fail; reading another's limits, and setting its
// own (pid 0), stay allowed.
//
// With the network off: socket(AF_UNIX, …) is refused (EACCES). A network
// namespace (or Landlock's TCP rules) stops TCP and UDP, and a network
// namespace or Landlock's scope stops abstract Unix sockets; but a
// pathname Unix socket is reached through the filesystem, and before
// Landlock's resolve-unix right (most kernels) nothing else stops a command
// from connecting to any listening socket it can name: a local proxy, the
// user's agent, another program's control socket, any of which can carry a
// secret away. socketpair(2), which only connects a process to itself,
// stays allowed, and so does every other family (which the namespace or
// Landlock confine). io_uring is refused with it: its IORING_OP_SOCKET and
// IORING_OP_CONNECT make sockets without a socket(2) call to see.

// Audit architectures and the seccomp return values (linux/audit.h,
// linux/seccomp.h).
const (
	auditArchX86_64  = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAarch64 = 0xc00000b7
	auditArchARM     = 0x40000028

	x32SyscallBit = 0x40000000

	seccompRetAllow = 0x7fff0000
	seccompRetErrno = 0x00050000
)

// filterArch is one architecture's numbers for the calls the filter
// knows: socket(2), the multiplexed socketcall(2) where it exists (its
// arguments are behind a pointer the filter cannot read, so it is refused
// whole), prlimit64(2) and io_uring.
type filterArch struct {
	arch       uint32
	socket     uint32
	socketcall uint32 // 0: none on this architecture
	prlimit    uint32
	uring      [3]uint32
	denyX32    bool
}

// errNoFilter: the filter does not know this architecture.
var errNoFilter = errors.New("no seccomp filter")

// filterArches lists the native architecture first, then the compat one
// its kernel also runs (32-bit programs).
func filterArches() ([]filterArch, error) {
	uring := [3]uint32{425, 426, 427} // io_uring_setup, _enter, _register: the same in every table since 5.1
	switch runtime.GOARCH {
	case "amd64":
		return []filterArch{
			{arch: auditArchX86_64, socket: 41, prlimit: 302, uring: uring, denyX32: true},
			{arch: auditArchI386, socket: 359, socketcall: 102, prlimit: 340, uring: uring},
		}, nil
	case "arm64":
		return []filterArch{
			{arch: auditArchAarch64, socket: 198, prlimit: 261, uring: uring},
			{arch: auditArchARM, socket: 281, prlimit: 369, uring: uring},
		}, nil
	}
	return nil, fmt.Errorf("%w for %s", errNoFilter, runtime.GOARCH)
}

// seccompFilter builds the classic BPF program; denyUnix adds the part for
// a network that is off.
func seccompFilter(denyUnix bool) ([]unix.SockFilter, error) {
	arches, err := filterArches()
	if err != nil {
		return nil, err
	}
	const (
		offNr   = 0  // offsetof(struct seccomp_data, nr)
		offArch = 4  // offsetof(struct seccomp_data, arch)
		offArg0 = 16 // args[0], low 32 bits (little-endian)
		offArg2 = 32 // args[2], low 32 bits; +4 the high ones
	)
	ld := func(k uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: k}
	}
	ret := func(k uint32) unix.SockFilter { return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k} }
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: k, Jt: jt, Jf: jf}
	}
	errno := func(e unix.Errno) unix.SockFilter { return ret(seccompRetErrno | uint32(e)) }
	allow := ret(seccompRetAllow)

	var prog []unix.SockFilter
	for _, a := range arches {
		// One block per architecture, each rule ending in a return: load
		// arch; if it is not this one, jump over the block.
		block := []unix.SockFilter{ld(offNr)}
		if a.denyX32 {
			// x32 calls are the same numbers with a high bit: refuse them
			// all rather than list everything twice (nothing uses x32).
			block = append(block, unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, K: x32SyscallBit, Jt: 0, Jf: 1}, errno(unix.ENOSYS))
		}
		// prlimit64(pid, resource, new, old): refused when pid is not 0
		// and new is not NULL (both halves of the pointer).
		block = append(block,
			jeq(a.prlimit, 0, 8),
			ld(offArg0),
			jeq(0, 5, 0), // pid 0: itself
			ld(offArg2),
			jeq(0, 0, 2),
			ld(offArg2+4),
			jeq(0, 1, 0), // new NULL: a read
			errno(unix.EPERM),
			allow,
		)
		if denyUnix {
			for _, nr := range a.uring {
				block = append(block, jeq(nr, 0, 1), errno(unix.EACCES))
			}
			if a.socketcall != 0 {
				block = append(block, jeq(a.socketcall, 0, 1), errno(unix.EACCES))
			}
			// socket(AF_UNIX, …): refused; another family: allowed.
			block = append(block, jeq(a.socket, 0, 3), ld(offArg0), jeq(unix.AF_UNIX, 0, 1), errno(unix.EACCES))
		}
		block = append(block, allow)
		if len(block) > 255 {
			return nil, fmt.Errorf("seccomp filter block too long (%d)", len(block))
		}
		prog = append(prog, ld(offArch), jeq(a.arch, 0, uint8(len(block))))
		prog = append(prog, block...)
	}
	// An architecture the filter does not know cannot occur on this
	// kernel.
	prog = append(prog, allow)
	return prog, nil
}

// installFilter installs the filter on every thread of this process (and
// so on everything it starts). It sets no_new_privs, which Landlock needs
// anyway.
func installFilter(denyUnix bool) error {
	prog, err := seccompFilter(denyUnix)
	if err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %v", err)
	}
	// TSYNC: every thread, or none (a positive return names a thread
	// that could not take it).
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: %v", errno)
	}
	if r != 0 {
		return fmt.Errorf("seccomp: thread %d could not take the filter", r)
	}
	return nil
}
