//go:build unix

package config

import "syscall"

// oNonblock keeps opening a FIFO from blocking until a writer comes.
const oNonblock = syscall.O_NONBLOCK
