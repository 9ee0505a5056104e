//go:build race

package shell

// slowdown scales the time bounds of tests that measure how soon a command
// is stopped: the race detector makes the interpreter (and so a flood of
// builtins) several times slower, and the hostile rows run in parallel.
const slowdown = 3
