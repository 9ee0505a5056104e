//go:build !race

package shell

// slowdown scales the time bounds of tests that measure how soon a command
// is stopped (see race_test.go).
const slowdown = 1
