// Package buildinfo says which Hearth this is.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is Hearth's release version.
const Version = "0.1.0-dev"

// String describes the build: version, Go version, and the VCS revision
// where the build recorded one.
func String() string {
	s := fmt.Sprintf("%s (%s %s/%s", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				rev = kv.Value
			case "vcs.modified":
				if kv.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			s += ", " + rev + dirty
		}
	}
	return s + ")"
}
