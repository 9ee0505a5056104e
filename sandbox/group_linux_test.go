package sandbox

import (
	"math/rand"
	"testing"
)

// No group's tag can be turned into another's by lowering limits (all a
// process without CAP_SYS_RESOURCE can do): one of the two would have to
// rise. And every tag is below this process's own limits, so the launcher
// can set it.
func TestTagsCannotBeLoweredIntoOneAnother(t *testing.T) {
	initReaper()
	if !reaper.tags {
		t.Skip("this process's RLIMIT_LOCKS or RLIMIT_RTTIME leaves no room for tags")
	}
	rng := rand.New(rand.NewSource(1))
	ns := []uint64{1, 2, 3, 1 << 24, 1<<24 + 1, tagSpan - 1}
	for i := 0; i < 2000; i++ {
		ns = append(ns, 1+uint64(rng.Int63n(tagSpan-1)))
	}
	for i, a := range ns {
		ta := tagOf(a)
		if ta.locks >= reaper.limit.locks || ta.rt >= reaper.limit.rt {
			t.Fatalf("tag of %d is not below this process's limits", a)
		}
		if idOf(ta) != a {
			t.Fatalf("idOf(tagOf(%d)) = %d", a, idOf(ta))
		}
		for _, b := range ns[max(0, i-20):i] {
			if a == b {
				continue
			}
			tb := tagOf(b)
			if tb.locks <= ta.locks && tb.rt <= ta.rt || ta.locks <= tb.locks && ta.rt <= tb.rt {
				t.Fatalf("tags of %d %+v and %d %+v: one is reachable from the other", a, ta, b, tb)
			}
		}
	}
	one := tagOf(1)
	for _, bad := range []tag{reaper.limit, {one.locks - 1, one.rt}, {one.locks, one.rt - 1}, {0, 0}} {
		if id := idOf(bad); id != 0 {
			t.Errorf("idOf(%+v) = %d, want none", bad, id)
		}
	}
}

// Groups get distinct ids, and a closed group's id is free again.
func TestNewGroupIDs(t *testing.T) {
	seen := map[uint64]bool{}
	var gs []*Group
	for i := 0; i < 100; i++ {
		g := NewGroup()
		if g.id == 0 || seen[g.id] {
			t.Fatalf("id %d given twice", g.id)
		}
		seen[g.id] = true
		gs = append(gs, g)
	}
	for _, g := range gs {
		if g.Close() != 0 {
			t.Error("an empty group left processes")
		}
	}
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	for _, g := range gs {
		if reaper.live[g.id] != nil {
			t.Errorf("group %d still live after Close", g.id)
		}
	}
}

// The cost of one look through /proc, which each call that started a
// program pays once when it ends.
func BenchmarkGroupScan(b *testing.B) {
	g := NewGroup()
	defer g.Close()
	for i := 0; i < b.N; i++ {
		g.members(true)
	}
}
