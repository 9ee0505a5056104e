//go:build !hearthprobe

package main

import "context"

// startProbe does nothing: the probe is built in only for the end-to-end
// test (the tag hearthprobe; see probe.go).
func (a *app) startProbe(context.Context) {}
