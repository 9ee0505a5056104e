package main

import "runtime/debug"

// Garbage collection during start-up: a short run (hearth run, hearth
// --version, hearth sessions) allocates a few megabytes while it starts
// (package initialisation, configuration, tools) and exits soon after; at
// Go's default (GOGC=100, a first collection at 4 MB) it spent some 7% of
// its CPU collecting garbage it would have dropped at exit. A run starts
// with a target four times as loose; the long-running modes (the terminal
// UI, hearth serve) go back to the default once they start. A GOGC the user
// set is left alone.
const (
	startGCPercent = 400
	longGCPercent  = 100
)

// startGC loosens the collector for start-up (unless GOGC is set).
func startGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(startGCPercent)
	}
}

// longRunning restores the collector's default for a mode that stays up
// (unless GOGC is set).
func longRunning(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(longGCPercent)
	}
}
