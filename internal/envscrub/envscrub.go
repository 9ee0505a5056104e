// Package envscrub takes secrets out of Hearth's own environment once they
// have been read.
//
// A secret given to Hearth in its environment (OPENAI_API_KEY,
// HEARTH_API_KEY, HEARTH_API_TOKEN, a provider's api_key_env) would
// otherwise stay there for the life of the process: inherited by every
// program Hearth starts without a scrubbed environment (MCP servers, the
// clipboard helper), and readable by any process of the same user in
// /proc/<pid>/environ. Take removes such variables: it keeps their values in
// memory for Hearth's own later reads (Lookup, Getenv, Wrap), unsets them
// (os.Unsetenv: children no longer inherit them), and, on Linux, overwrites
// their values in the block /proc/<pid>/environ shows, which os.Unsetenv
// does not touch (see scrub_linux.go).
package envscrub

import (
	"os"
	"reflect"
	"strings"
	"sync"
)

var (
	mu sync.Mutex
	// taken holds the values Take removed, by name.
	taken = map[string]string{}
)

// Take moves the named variables out of the process environment. A
// variable that is set is remembered (Lookup and Getenv still find it) and
// unset; then, on Linux, the values of all the named variables are zeroed
// in the environment block the process was started with (what
// /proc/<pid>/environ shows), whether or not they were still set. The error
// says why that block could not be overwritten (no /proc, a kernel that
// refuses writes to /proc/self/mem); the variables are unset regardless.
//
// GODEBUG is never taken: the runtime parses it from that block before the
// environment is copied. Empty names and names holding "=" or NUL are
// skipped.
func Take(names ...string) error {
	mu.Lock()
	defer mu.Unlock()
	var scrub []string
	for _, n := range names {
		if n == "" || n == "GODEBUG" || strings.ContainsAny(n, "=\x00") {
			continue
		}
		if v, ok := os.LookupEnv(n); ok {
			taken[n] = v
			os.Unsetenv(n)
		}
		scrub = append(scrub, n)
	}
	if len(scrub) == 0 {
		return nil
	}
	return scrubInitial(scrub)
}

// Lookup returns the named variable from the process environment or, when
// it is not there, the value Take removed from it.
func Lookup(name string) (string, bool) {
	if v, ok := os.LookupEnv(name); ok {
		return v, true
	}
	mu.Lock()
	defer mu.Unlock()
	v, ok := taken[name]
	return v, ok
}

// Getenv is os.Getenv that also sees what Take took.
func Getenv(name string) string {
	v, _ := Lookup(name)
	return v
}

// Wrap returns a getenv that also sees what Take took, when getenv reads
// this process's environment (nil, os.Getenv or Getenv): once taken, those
// variables are no longer there, and a second read must not find them
// gone. Any other function (a test's map, an embedding program's own
// environment) is returned as it is: what the process environment held is
// not its to see.
func Wrap(getenv func(string) string) func(string) string {
	if getenv == nil || sameFunc(getenv, os.Getenv) || sameFunc(getenv, Getenv) {
		return Getenv
	}
	return getenv
}

// sameFunc reports whether a and b are the same top-level function (their
// code pointers match; closures are never equal to os.Getenv).
func sameFunc(a, b func(string) string) bool {
	return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer()
}
