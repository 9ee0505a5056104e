//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// daemonSockets are sockets through which a confined program could ask a
// daemon to run code for it outside the sandbox (a container with the
// host's root, a systemd unit, a D-Bus activated service). A SelfCommand
// copy covers those that exist; %d is the user's uid.
var daemonSockets = []string{
	"/var/run/docker.sock",
	"/run/docker.sock",
	"/run/podman/podman.sock",
	"/run/containerd/containerd.sock",
	"/run/dbus/system_bus_socket",
	"/var/run/dbus/system_bus_socket",
	"/run/systemd/private",
	"/run/systemd/io.systemd.Manager",
	"/run/user/%d/bus",
	"/run/user/%d/docker.sock",
	"/run/user/%d/podman/podman.sock",
	"/run/user/%d/systemd/private",
}

func selfCommand(c *Confinement, cfg selfConfig, argv, env []string) (*exec.Cmd, error) {
	cfg.UID, cfg.GID = os.Getuid(), os.Getgid()
	cfg.Namespaced = !c.ns.failed.Load()
	cfg.UserNS = cfg.Namespaced && cfg.UID != 0
	return buildSelf(cfg, argv, env)
}

func buildSelf(cfg selfConfig, argv, env []string) (*exec.Cmd, error) {
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	attr := &syscall.SysProcAttr{Setsid: true}
	if cfg.Namespaced {
		// A PID namespace: when the copy exits, the kernel kills every
		// process left in it, wherever it went (setsid, double fork).
		attr.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
		if cfg.DenyNetwork {
			attr.Cloneflags |= syscall.CLONE_NEWNET
		}
		if cfg.UserNS {
			// The same uid and gid inside as outside (as bubblewrap
			// does): files keep their owner and programs do not think
			// they are root. CAP_SYS_ADMIN, for the mounts, lasts until
			// ConfineSelf drops it.
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: cfg.UID, HostID: cfg.UID, Size: 1}}
			attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: cfg.GID, HostID: cfg.GID, Size: 1}}
			attr.GidMappingsEnableSetgroups = false
			attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
		}
	}
	return &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        argv,
		Env:         append(env, selfEnv+"="+string(raw)),
		SysProcAttr: attr,
	}, nil
}

// withoutNamespaces reports whether cmd failed to start because it asked
// for namespaces, and if so turns it into the same command without them.
func withoutNamespaces(cmd *exec.Cmd) bool {
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Cloneflags == 0 {
		return false
	}
	var cfg selfConfig
	var rest []string
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, selfEnv+"="); ok {
			if json.Unmarshal([]byte(v), &cfg) != nil {
				return false
			}
			continue
		}
		rest = append(rest, kv)
	}
	cfg.Namespaced, cfg.UserNS = false, false
	fresh, err := buildSelf(cfg, cmd.Args, rest)
	if err != nil {
		return false
	}
	fresh.Dir, fresh.Stdin, fresh.Stdout, fresh.Stderr = cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr
	fresh.ExtraFiles, fresh.WaitDelay = cmd.ExtraFiles, cmd.WaitDelay
	*cmd = exec.Cmd{}
	*cmd = *fresh
	return true
}

func confineSelf(cfg selfConfig) (SelfReport, error) {
	var rep SelfReport
	if cfg.Namespaced {
		if err := mountView(cfg); err != nil {
			// Mounts refused (a user namespace without capabilities,
			// as some distributions make them): Landlock still holds.
			rep.Problems = append(rep.Problems, "read-only .git and hidden secret locations are not enforced: "+err.Error())
		} else {
			rep.Namespaced = true
		}
		rep.PIDNamespace = os.Getpid() == 1
		rep.NetworkIsolated = cfg.DenyNetwork
	} else {
		rep.Problems = append(rep.Problems, "no mount namespace (unprivileged user namespaces are off): .git is writable by commands and secret locations are readable")
	}
	if err := setLimits(cfg.launchConfig); err != nil {
		return rep, err
	}
	abi, err := restrictSelf(cfg.launchConfig)
	if err != nil {
		return rep, err
	}
	rep.Landlock = abi
	if err := installFilter(cfg.DenyNetwork); err != nil {
		what := "commands may change the limits of Hearth's own process"
		if cfg.DenyNetwork {
			what += ", and reach Unix sockets with the network off"
		}
		rep.Problems = append(rep.Problems, what+": "+err.Error())
	} else {
		rep.UnixSocketsDenied = cfg.DenyNetwork
	}
	if err := dropCapabilities(cfg.onExecThread); err != nil {
		return rep, fmt.Errorf("dropping capabilities: %v", err)
	}
	return rep, nil
}

// mountView makes the copy's own view of the filesystem: read-only .git
// and .hearth, hidden secrets and daemon sockets. Mounts stay in the copy's
// mount namespace: / is made a slave first, so nothing propagates back.
func mountView(cfg selfConfig) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("private mounts: %v", err)
	}
	if os.Getpid() == 1 {
		// The copy's own /proc: its processes see each other, with the
		// pids they use, and nothing of the rest of the machine (Hearth
		// included). The kernel refuses it where /proc is partly
		// covered (some containers); the machine's /proc stays then.
		_ = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	}
	// Everything read-only, then the writable directories writable again:
	// Landlock has no right for chmod, chown, utime or extended
	// attributes, which a read-only mount refuses.
	if err := readOnlyEverywhere(); err != nil {
		return err
	}
	for _, w := range cfg.Writable {
		if err := bindWritable(w); err != nil {
			return err
		}
	}
	for _, p := range cfg.ReadOnly {
		if err := bindReadOnly(p); err != nil {
			return err
		}
	}
	hide := append([]string(nil), cfg.Hidden...)
	for _, s := range daemonSockets {
		if strings.Contains(s, "%d") {
			s = fmt.Sprintf(s, cfg.UID)
		}
		hide = append(hide, s)
	}
	for _, p := range hide {
		if !hideable(p, cfg.Writable) {
			continue
		}
		if err := cover(p); err != nil {
			return err
		}
	}
	return nil
}

// cover hides p: a directory under an empty read-only tmpfs of mode 000, a
// file (or socket) under /dev/null, bound read-only. A missing path is
// left alone (nothing to read; one created later is inside a read-only
// parent, or is the user's own doing).
func cover(p string) error {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return nil
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := unix.Mount("tmpfs", p, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, "size=4k,nr_inodes=1,mode=000"); err != nil {
			return fmt.Errorf("hiding %s: %v", p, err)
		}
		return nil
	}
	if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("hiding %s: %v", p, err)
	}
	if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|lockedFlags(p), ""); err != nil {
		return fmt.Errorf("hiding %s: %v", p, err)
	}
	return nil
}

// readOnlyEverywhere remounts every mount of this namespace read-only.
// The root must take it; a mount this process cannot reach (hidden under
// another) is left as it is, since nothing can reach it through a path.
func readOnlyEverywhere() error {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("reading the mounts: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		err := unix.Mount("", mp, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|lockedFlags(mp), "")
		if err != nil && mp == "/" {
			return fmt.Errorf("making / read-only: %v", err)
		}
	}
	return nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v byte
			ok := true
			for _, c := range s[i+1 : i+4] {
				if c < '0' || c > '7' {
					ok = false
					break
				}
				v = v*8 + byte(c-'0')
			}
			if ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// bindWritable binds w over itself, writable (below the read-only
// mounts): a new mount, which takes the flags given here.
func bindWritable(w string) error {
	if err := unix.Mount(w, w, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("making %s writable: %v", w, err)
	}
	if err := unix.Mount("", w, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_NOSUID|unix.MS_NODEV|(lockedFlags(w)&^unix.MS_RDONLY), ""); err != nil {
		return fmt.Errorf("making %s writable: %v", w, err)
	}
	return nil
}

// bindReadOnly binds p over itself, read-only. A missing p is left alone.
func bindReadOnly(p string) error {
	if _, err := os.Lstat(p); err != nil {
		return nil
	}
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("making %s read-only: %v", p, err)
	}
	if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|lockedFlags(p), ""); err != nil {
		return fmt.Errorf("making %s read-only: %v", p, err)
	}
	return nil
}

// lockedFlags returns the flags of the mount holding p that a remount in
// a user namespace must keep (the kernel refuses to clear them).
func lockedFlags(p string) uintptr {
	var s unix.Statfs_t
	if unix.Statfs(p, &s) != nil {
		return 0
	}
	var f uintptr
	for _, m := range []struct{ st, ms int64 }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if s.Flags&m.st != 0 {
			f |= uintptr(m.ms)
		}
	}
	return f
}

// restrictSelf applies Landlock to every thread of this process: read and
// execute anywhere, write only in cfg.Writable (without making device
// nodes), the harmless devices, signals only inside the sandbox.
func restrictSelf(cfg launchConfig) (int, error) {
	abi := landlockABI()
	if abi == 0 {
		return 0, nil
	}
	c := landlock.V11
	if !cfg.DenyNetwork {
		c.HandledAccessNet = 0
	}
	rw := c.HandledAccessFS &^ landlock.AccessFSSet(ll.AccessFSMakeChar|ll.AccessFSMakeBlock|ll.AccessFSIoctlDev)
	if abi < 2 {
		rw &^= landlock.AccessFSSet(ll.AccessFSRefer)
	}
	// Connecting to a pathname Unix socket is a right of its own from
	// ABI 9: outside the writable places, only with the network on.
	everywhere := landlock.RODirs("/")
	if !cfg.DenyNetwork {
		everywhere = everywhere.WithResolveUnix()
	}
	rules := []landlock.Rule{
		everywhere,
		landlock.PathAccess(rw, cfg.Writable...),
		landlock.RWFiles(writableDevices...).IgnoreIfMissing(),
	}
	if err := c.BestEffort().Restrict(rules...); err != nil {
		return abi, fmt.Errorf("landlock: %v", err)
	}
	return abi, nil
}

// keptCaps are the capabilities a root Hearth's commands keep: ordinary
// file ownership and permission overrides, setuid/setgid to other users,
// low ports. Everything else (mounts, raw devices, modules, ptrace,
// resource limits, raw sockets, the clock, reboot, …) is dropped.
var keptCaps = []uintptr{
	unix.CAP_CHOWN, unix.CAP_DAC_OVERRIDE, unix.CAP_FOWNER, unix.CAP_FSETID,
	unix.CAP_KILL, unix.CAP_SETGID, unix.CAP_SETUID, unix.CAP_NET_BIND_SERVICE, unix.CAP_AUDIT_WRITE,
}

// dropCapabilities removes every capability but keptCaps from the
// effective, permitted and inheritable sets and clears the ambient set, on
// every thread; and from the bounding set, which matters only where a
// program is executed (a root process regains its bounding set on exec):
// on the thread onExec runs functions on, when given (the thread that
// starts every program), otherwise on every thread — 40 all-thread calls,
// some 5 ms.
func dropCapabilities(onExec func(func())) error {
	keep := map[uintptr]bool{}
	for _, c := range keptCaps {
		keep[c] = true
	}
	last := lastCap()
	var boundErr error
	dropBound := func(syscall3 func(nr, a1, a2, a3 uintptr) (uintptr, uintptr, unix.Errno)) {
		for c := uintptr(0); c <= last; c++ {
			if keep[c] {
				continue
			}
			if _, _, e := syscall3(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, c, 0); e != 0 && e != unix.EINVAL {
				if e != unix.EPERM { // EPERM: no CAP_SETPCAP, nothing to drop
					boundErr = fmt.Errorf("bounding set: %v", e)
				}
				return
			}
		}
	}
	if onExec != nil {
		onExec(func() { dropBound(unix.RawSyscall) })
	} else {
		dropBound(func(nr, a1, a2, a3 uintptr) (uintptr, uintptr, unix.Errno) {
			r1, r2, e := psx.Syscall3(nr, a1, a2, a3)
			return r1, r2, unix.Errno(e)
		})
	}
	if boundErr != nil {
		return boundErr
	}
	if _, _, e := psx.Syscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 && e != unix.EINVAL {
		return fmt.Errorf("ambient set: %v", e)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return err
	}
	var mask [2]uint32
	for _, c := range keptCaps {
		mask[c/32] |= 1 << (c % 32)
	}
	for i := range data {
		data[i].Effective &= mask[i]
		data[i].Permitted &= mask[i]
		data[i].Inheritable &= mask[i]
	}
	if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("capset: %v", e)
	}
	return nil
}

// lastCap is the highest capability this kernel knows.
func lastCap() uintptr {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return unix.CAP_LAST_CAP
	}
	var n uintptr
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &n); err != nil {
		return unix.CAP_LAST_CAP
	}
	return n
}

// View returns what a copy's mounts are made from: which of the read-only
// and hidden paths and daemon sockets exist, and what they are. A copy
// started when View was different has the wrong mounts (a .git made since
// is not read-only in it, a new secret location not hidden).
func (c *Confinement) View() string {
	var b strings.Builder
	add := func(p string) {
		var st unix.Stat_t
		if unix.Stat(p, &st) != nil {
			b.WriteString("-\n")
			return
		}
		fmt.Fprintf(&b, "%d:%d:%o\n", st.Dev, st.Ino, st.Mode&unix.S_IFMT)
	}
	for _, p := range c.ReadOnly {
		add(p)
	}
	for _, p := range c.Hidden {
		add(p)
	}
	uid := os.Getuid()
	for _, s := range daemonSockets {
		if strings.Contains(s, "%d") {
			s = fmt.Sprintf(s, uid)
		}
		add(s)
	}
	return b.String()
}

// InOwnPIDNamespace reports whether cmd, started by StartSelf, runs in a
// PID namespace of its own (see Group.StartedInit).
func InOwnPIDNamespace(cmd *exec.Cmd) bool {
	return cmd.Process != nil && cmd.SysProcAttr != nil && cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWPID != 0
}
