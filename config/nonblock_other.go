//go:build !unix

package config

// oNonblock is not needed where there are no FIFOs in the file system.
const oNonblock = 0
