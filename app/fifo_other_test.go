//go:build !unix

package app

import "errors"

func mkfifo(string) error { return errors.New("no FIFOs here") }
