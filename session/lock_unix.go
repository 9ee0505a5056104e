//go:build unix

package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Lock takes the session for this process with an advisory file lock beside
// the database (flock: released by the kernel when the process dies, even
// by SIGKILL). Another holder, in this process or another, makes it wait up
// to LockTimeout and then fail with ErrBusy naming the holder's pid.
func (s *SQLite) Lock(ctx context.Context, id string) (func(), error) {
	dir := filepath.Join(filepath.Dir(s.path), "locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	name := filepath.Join(dir, lockName(id)+".lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock session %s: %w", id, err)
	}
	deadline := time.Now().Add(s.LockTimeout)
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			f.Truncate(0)
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())), 0)
			return func() {
				unix.Flock(int(f.Fd()), unix.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock session %s: %w", id, err)
		}
		if time.Now().After(deadline) {
			pid, _ := os.ReadFile(name)
			f.Close()
			holder := "another hearth process"
			if p := strings.TrimSpace(string(pid)); p != "" {
				holder += " (pid " + p + ")"
			}
			return nil, fmt.Errorf("%w: session %s is being used by %s; wait for it to finish, or continue in another session", ErrBusy, id, holder)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// lockName keeps an id safe as a file name.
func lockName(id string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, id)
}

// RemoveLock deletes the lock file of a session that is gone.
func (s *SQLite) RemoveLock(id string) {
	os.Remove(filepath.Join(filepath.Dir(s.path), "locks", lockName(id)+".lock"))
}
