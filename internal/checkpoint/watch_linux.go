package checkpoint

import (
	"errors"
	"path/filepath"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// watcher tells which folders changed since the last snapshot (inotify),
// so that a snapshot reads those folders again and no others.
//
// What it cannot follow makes the next snapshot walk everything: a folder
// made, removed or moved (the set of folders changed), an ignore file
// changed, its queue overflowing, a watch it could not add (the user's
// inotify limit). What it is never trusted for: the snapshot a restore
// compares with and keeps walks everything (SnapshotAll), so a change
// inotify does not report (a file written through a hard link from outside
// the workspace, or through a memory mapping after its file was closed)
// is found there, never overwritten unseen.
type watcher struct {
	mu     sync.Mutex
	fd     int
	wds    map[int32]string // watch → folder (relative to the root, "" for it)
	broken bool             // a watch could not be added: it cannot be trusted
	buf    []byte
}

const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_CLOSE_WRITE | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

func newWatcher() *watcher {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	return &watcher{fd: fd, wds: map[int32]string{}, buf: make([]byte, 64<<10)}
}

// add watches the folder rel below root, before it is read: a change made
// after it was read is reported.
func (w *watcher) add(root, rel string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken {
		return
	}
	wd, err := unix.InotifyAddWatch(w.fd, filepath.Join(root, filepath.FromSlash(rel)), watchMask)
	if err != nil {
		w.broken = true // ENOSPC (the limit), or the folder went
		return
	}
	w.wds[int32(wd)] = rel
}

// reset forgets every watch, before a walk that adds them again.
func (w *watcher) reset() *watcher {
	if w != nil {
		w.close()
	}
	return newWatcher()
}

func (w *watcher) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	unix.Close(w.fd)
	w.fd = -1
}

// changes returns the folders whose entries changed since the last call,
// or whole false when only a walk of everything can tell.
func (w *watcher) changes() (dirty map[string]bool, whole bool) {
	if w == nil {
		return nil, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken {
		return nil, false
	}
	dirty = map[string]bool{}
	for {
		n, err := unix.Read(w.fd, w.buf)
		if errors.Is(err, unix.EAGAIN) || n == 0 {
			return dirty, true
		}
		if err != nil || n < unix.SizeofInotifyEvent {
			return nil, false
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			name := ""
			if l := int(ev.Len); l > 0 && off+unix.SizeofInotifyEvent+l <= n {
				raw := w.buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+l]
				for i, c := range raw {
					if c == 0 {
						raw = raw[:i]
						break
					}
				}
				name = string(raw)
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
			mask := ev.Mask
			dir, known := w.wds[ev.Wd]
			switch {
			case mask&unix.IN_Q_OVERFLOW != 0:
				return nil, false
			case mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_UNMOUNT) != 0:
				return nil, false
			case !known:
				return nil, false
			case mask&unix.IN_ISDIR != 0 && mask&(unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_MOVED_TO) != 0:
				return nil, false // the folders changed
			case isIgnoreFile(name):
				return nil, false
			}
			dirty[dir] = true
		}
	}
}

func isIgnoreFile(name string) bool {
	for _, n := range ignoreFiles {
		if name == n {
			return true
		}
	}
	return false
}
