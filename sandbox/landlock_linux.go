//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// devices a confined process may always write.
var writableDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"}

// landlockABI returns the kernel's Landlock ABI version, 0 if none.
func landlockABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// Status reports how c is enforced on this machine.
func (c *Confinement) Status() Status {
	abi := landlockABI()
	s := Status{ABI: abi, Active: abi >= 1, Network: c.DenyNetwork && abi >= 4}
	switch {
	case abi == 0:
		s.Note = "not confined: this kernel has no Landlock (Linux 5.13+ with landlock in the lsm= boot list); commands can write anywhere the user can"
	case abi == 1:
		s.Note = "confined by Landlock ABI 1: writes only inside " + fmt.Sprint(c.Writable) + " (moving files between directories fails with EXDEV on this kernel)"
	default:
		s.Note = fmt.Sprintf("confined by Landlock ABI %d: writes only inside %v", abi, c.Writable)
	}
	if c.DenyNetwork {
		if abi >= 4 {
			s.Note += "; network denied"
		} else {
			s.Note += "; network NOT denied (needs Landlock ABI 4, Linux 6.7+)"
		}
	}
	return s
}

func launcherCommand(cfg launchConfig, argv, env []string) (*exec.Cmd, error) {
	cfg.Env = stripLaunchEnv(env)
	raw, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	// The launcher's own environment: only the marker and the group id
	// (which marks it as the call's before its limits are set).
	own := []string{launchEnv + "=" + string(raw)}
	for _, kv := range env {
		if strings.HasPrefix(kv, groupEnv+"=") {
			own = append(own, kv)
		}
	}
	cmd := &exec.Cmd{
		Path: "/proc/self/exe",
		Args: append([]string{launchArg0}, argv...),
		Env:  own,
	}
	return cmd, nil
}

// launch runs in the launcher process: it confines itself and executes the
// target. It never returns.
func launch(cfg launchConfig, argv, env []string) {
	if err := setLimits(cfg); err != nil {
		launcherFail(err)
	}
	if err := restrict(cfg); err != nil {
		launcherFail(err)
	}
	if err := installFilter(cfg.DenyNetwork); err != nil && !errors.Is(err, errNoFilter) {
		launcherFail(fmt.Errorf("seccomp filter: %v", err))
	}
	err := syscall.Exec(cfg.Path, argv, env)
	if errors.Is(err, syscall.ENOEXEC) {
		// A script without a #! line: run it with sh, as execvp does.
		err = syscall.Exec("/bin/sh", append([]string{"sh", cfg.Path}, argv[1:]...), env)
	}
	launcherFail(fmt.Errorf("cannot run %s: %v", cfg.Path, err))
}

func restrict(cfg launchConfig) error {
	abi := landlockABI()
	if abi == 0 {
		return nil // Status has told the caller.
	}
	c := landlock.V11
	if !cfg.DenyNetwork {
		c.HandledAccessNet = 0
	}
	rw := landlock.RWDirs(cfg.Writable...).WithResolveUnix()
	if abi >= 2 {
		// Renames and hard links between directories of the workspace.
		rw = rw.WithRefer()
	}
	// Connecting to a pathname Unix socket is a right of its own from
	// ABI 9: outside the writable places, only with the network on.
	everywhere := landlock.RODirs("/")
	if !cfg.DenyNetwork {
		everywhere = everywhere.WithResolveUnix()
	}
	rules := []landlock.Rule{
		everywhere,
		rw,
		landlock.RWFiles(writableDevices...).IgnoreIfMissing(),
	}
	if err := c.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("landlock: %v", err)
	}
	return nil
}

func setLimits(cfg launchConfig) error {
	if cfg.MaxFileSize > 0 {
		if err := lowerLimit(unix.RLIMIT_FSIZE, uint64(cfg.MaxFileSize)); err != nil {
			return fmt.Errorf("file size limit: %v", err)
		}
	}
	if cfg.TagLocks > 0 && cfg.TagRTTime > 0 {
		// The Group's tag (see Group): limits that restrict nothing
		// real, which no descendant can raise again.
		if err := lowerLimit(unix.RLIMIT_LOCKS, cfg.TagLocks); err != nil {
			return fmt.Errorf("group tag: %v", err)
		}
		if err := lowerLimit(unix.RLIMIT_RTTIME, cfg.TagRTTime); err != nil {
			return fmt.Errorf("group tag: %v", err)
		}
	}
	if cfg.MaxProcs > 0 && os.Getuid() != 0 {
		n := uint64(userProcesses()) + uint64(cfg.MaxProcs)
		if err := lowerLimit(unix.RLIMIT_NPROC, n); err != nil {
			return fmt.Errorf("process limit: %v", err)
		}
	}
	return nil
}

// lowerLimit sets both limits to n, never raising them.
func lowerLimit(resource int, n uint64) error {
	var cur unix.Rlimit
	if err := unix.Getrlimit(resource, &cur); err != nil {
		return err
	}
	if cur.Max != unix.RLIM_INFINITY && cur.Max < n {
		n = cur.Max
	}
	return unix.Setrlimit(resource, &unix.Rlimit{Cur: n, Max: n})
}

// userProcesses counts the processes of the current user.
func userProcesses() int {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	uid := uint32(os.Getuid())
	n := 0
	for _, name := range names {
		if _, err := strconv.Atoi(name); err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+name, &st) == nil && st.Uid == uid {
			n++
		}
	}
	return n
}
