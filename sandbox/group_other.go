//go:build !linux

package sandbox

import "syscall"

// AdoptOrphans does nothing outside Linux.
func AdoptOrphans() error { return nil }

// NewGroup returns a Group, which outside Linux tracks nothing: only
// process groups are killed there.
func NewGroup() *Group { return &Group{} }

func (g *Group) limits() (uint64, uint64) { return 0, 0 }

// Signal does nothing outside Linux.
func (g *Group) Signal(sig syscall.Signal) int { return 0 }

// Owns is false outside Linux.
func (g *Group) Owns(pid int) bool { return false }

// Close does nothing outside Linux.
func (g *Group) Close() int { return 0 }

// SameGroup reports whether pid is in this process's Group: never, outside
// Linux.
func SameGroup(pid int) bool { return false }

// LimitProcesses does nothing outside Linux.
func (g *Group) LimitProcesses(pid, limit int) int { return 0 }

// ProcessLimitRefusals is 0 outside Linux.
func (g *Group) ProcessLimitRefusals() int64 { return 0 }

// HasProcessLimit is false outside Linux.
func (g *Group) HasProcessLimit() bool { return false }

// StartedInit is Started outside Linux.
func (g *Group) StartedInit(pid int) { g.Started(pid) }
