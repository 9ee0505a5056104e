//go:build !linux

package checkpoint

// watcher is Linux's (inotify); elsewhere every snapshot walks the
// workspace.
type watcher struct{}

func newWatcher() *watcher                          { return nil }
func (w *watcher) add(root, rel string)             {}
func (w *watcher) reset() *watcher                  { return nil }
func (w *watcher) close()                           {}
func (w *watcher) changes() (map[string]bool, bool) { return nil, false }
