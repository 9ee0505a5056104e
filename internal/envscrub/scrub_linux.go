//go:build linux

package envscrub

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"
)

// The environment block, and why it may be overwritten.
//
// execve(2) copies the new program's argument and environment strings to
// the top of its stack; /proc/<pid>/environ shows the bytes between the
// kernel's mm->env_start and mm->env_end, read from that memory at the time
// of reading. Unsetting a variable from Go changes only Go's own copy, so
// the value stays visible there to every process of the same user (reading
// environ needs only PTRACE_MODE_READ, which Yama does not restrict).
//
// Overwriting the bytes is safe for the Go runtime because nothing in Go
// refers to them after start-up:
//   - runtime.goenvs_unix (runtime/runtime1.go) builds the environment with
//     gostring, which copies each string to the heap (unlike goargs, whose
//     os.Args strings point into the argument block, a separate range
//     before env_start that is never written here); syscall.copyenv
//     (syscall/env_unix.go) indexes those copies, and os.Unsetenv edits
//     them. checkGoCopies verifies it at run time, so a runtime that one day
//     shared the block would make Take refuse rather than change strings Go
//     believes immutable.
//   - getGodebugEarly (runtime/proc.go) reads GODEBUG from the block before
//     the copy is made (gostringnocopy) but only parses it into integers;
//     GODEBUG is never taken all the same.
//   - with cgo, libc's environ points into the block; os.Unsetenv has
//     already removed the variable from it (unsetenv(3)) before the bytes
//     are zeroed.
//
// The bytes are written through /proc/self/mem with pwrite, not through a
// pointer made from an address: no unsafe pointer conversion (go vet's and
// checkptr's concern) is involved, and a kernel that refuses the write
// returns an error instead of faulting. Only the value bytes of the named
// entries are zeroed, so the block keeps its length and layout ("NAME="
// followed by NULs).

// scrubInitial zeroes the values of the named variables in the process's
// initial environment block.
func scrubInitial(names []string) error {
	start, end, err := envBounds()
	if err != nil {
		return err
	}
	if end <= start {
		return nil
	}
	if err := checkGoCopies(start, end); err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("cannot overwrite the initial environment: %w", err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, int64(start)); err != nil {
		return fmt.Errorf("cannot read the initial environment: %w", err)
	}
	// The addresses must name what the kernel shows as environ: compare,
	// so that a misread of /proc/self/stat never writes elsewhere.
	shown, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return fmt.Errorf("cannot read /proc/self/environ: %w", err)
	}
	if !bytes.Equal(shown, block) {
		return errors.New("the initial environment is not where /proc/self/stat says: left as it is")
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	for off := 0; off < len(block); {
		n := bytes.IndexByte(block[off:], 0)
		if n < 0 {
			n = len(block) - off
		}
		entry := block[off : off+n]
		if eq := bytes.IndexByte(entry, '='); eq > 0 && want[string(entry[:eq])] {
			if val := entry[eq+1:]; len(val) > 0 {
				at := int64(start) + int64(off+eq+1)
				if _, err := mem.WriteAt(make([]byte, len(val)), at); err != nil {
					return fmt.Errorf("cannot overwrite the initial environment: %w", err)
				}
			}
		}
		off += n + 1
	}
	return nil
}

// envBounds returns mm->env_start and mm->env_end: fields 50 and 51 of
// /proc/self/stat (proc(5), Linux 3.5 and later).
func envBounds() (start, end uintptr, err error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("cannot find the initial environment: %w", err)
	}
	s := string(b)
	// Field 2, the command name, is in parentheses and may hold spaces
	// and parentheses: count from the last ')'.
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, errors.New("cannot parse /proc/self/stat")
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3
	const envStart, envEnd = 50 - 3, 51 - 3
	if len(f) <= envEnd {
		return 0, 0, errors.New("/proc/self/stat has no env_start (Linux before 3.5)")
	}
	s0, err0 := strconv.ParseUint(f[envStart], 10, 64)
	s1, err1 := strconv.ParseUint(f[envEnd], 10, 64)
	if err0 != nil || err1 != nil {
		return 0, 0, errors.New("cannot parse env_start and env_end in /proc/self/stat")
	}
	return uintptr(s0), uintptr(s1), nil
}

// checkGoCopies makes sure no string of Go's environment lies in the block
// [start, end): they are copies (runtime.goenvs_unix uses gostring), and
// zeroing bytes a Go string still shows would break Go's rule that strings
// never change.
func checkGoCopies(start, end uintptr) error {
	for _, kv := range os.Environ() {
		if kv == "" {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.StringData(kv)))
		if p >= start && p < end {
			return errors.New("the Go runtime's environment shares memory with the initial environment block: left as it is")
		}
	}
	return nil
}
