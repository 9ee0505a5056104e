//go:build !linux

package envscrub

// scrubInitial does nothing outside Linux: the variables are unset, but
// where a system shows a process's initial environment to other processes
// of the same user (macOS's `ps -E` reads it from the process's stack),
// their values stay visible there.
func scrubInitial([]string) error { return nil }
