//go:build !unix

package config

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs here") }
