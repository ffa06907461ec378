package listwatch_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/listwatch"
)

// forgetPrev is an etcd client's Watcher that hands on every event as
// etcd sent it, except that the event at revision at loses its previous
// value, as etcd sends it when that value was compacted while the watch
// caught up, or when the write raced the watch's creation (prevkv.go).
// before, if set, runs with its revision before that event is handed on.
type forgetPrev struct {
	clientv3.Watcher
	at     *atomic.Int64
	before func(rev int64)
}

func (f *forgetPrev) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	in := f.Watcher.Watch(ctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		for resp := range in {
			for i, e := range resp.Events {
				if e.Kv.ModRevision == f.at.Load() && e.PrevKv != nil {
					resp.Events[i] = &clientv3.Event{Type: e.Type, Kv: e.Kv}
					if f.before != nil {
						f.before(e.Kv.ModRevision)
					}
				}
			}
			select {
			case out <- resp:
			case <-ctx.Done():
				for range in {
				}
				return
			}
		}
	}()
	return out
}

// prevKVCases are the writes whose event loses its previous value: an
// update, an update under a label selector (which needs the old value to
// tell whether the object left the selection), a delete.
type prevKVCase struct {
	name   string
	labels string
	write  func(t *testing.T, s *sides)
}

var prevKVCases = []prevKVCase{
	{"update", "", func(t *testing.T, s *sides) { s.update(t, "ns1/a", "tier", "front") }},
	{"update under a selector", "app", func(t *testing.T, s *sides) { s.update(t, "ns1/a", "app", "db") }},
	{"delete", "", func(t *testing.T, s *sides) { s.remove(t, "ns1/a") }},
}

// playWithoutPrevKV serves both sides over clients whose Watchers lose
// the previous value of c's write's event, beneath the read-back every
// client of listwatch.Connect has, and calls before (if set) once, with
// that revision, before the first side hands the event on. Two watches
// on each side see the write (one with bookmarks, all namespaces; one
// in ns1), and settle compares them.
func playWithoutPrevKV(t *testing.T, c prevKVCase, before func(s *sides, rev int64)) *sides {
	e := startEtcd(t)
	at := new(atomic.Int64)
	var s *sides
	var once sync.Once
	hook := func(rev int64) {
		if before != nil {
			once.Do(func() { before(s, rev) })
		}
	}
	ours, theirs := connectTo(context.Background(), t, e), connectTo(context.Background(), t, e)
	ours.Watcher = listwatch.FillPreviousValues(&forgetPrev{Watcher: ours.Watcher, at: at, before: hook}, ours.KV)
	theirs.Watcher = listwatch.FillPreviousValues(&forgetPrev{Watcher: theirs.Watcher, at: at, before: hook}, theirs.KV)
	s = serveBoth(t, e, listwatch.Pods, ours, theirs)
	if _, err := s.w.Create(context.Background(), pod("ns1/a", "app", "web")); err != nil {
		t.Fatal(err)
	}
	from := s.rev(t)
	s.watchBoth(t, "", metav1.ListOptions{ResourceVersion: itoa(from), LabelSelector: c.labels, AllowWatchBookmarks: true})
	s.watchBoth(t, "ns1", metav1.ListOptions{ResourceVersion: itoa(from), LabelSelector: c.labels})
	at.Store(s.rev(t) + 1)
	c.write(t, s)
	s.settle(t)
	return s
}

// E17: an etcd event that is not a create and comes without its previous
// value ends kube-apiserver's watch with a 500, whether or not the watch
// needed that value (etcd3/event.go parseEvent): an update seen by a
// watch with no selector too, which could have been told without it.
// Here the value is gone for good: its revision is compacted before the
// event reaches the read-back, which then fails, as etcd's own read did.
func TestE17WatchEventWithoutPreviousValueEndsTheWatch(t *testing.T) {
	for _, c := range prevKVCases {
		t.Run(c.name, func(t *testing.T) {
			s := playWithoutPrevKV(t, c, func(s *sides, rev int64) {
				// The first side's hook compacts, on its watch's goroutine
				// (so no t.Fatal here), up to the event's own revision:
				// its previous value goes, and no watch here starts
				// before it.
				if err := s.etcd.Compact(context.Background(), rev); err != nil {
					t.Errorf("compact: %v", err)
				}
			})
			for _, p := range s.open {
				if !p.sides[1].ended {
					t.Errorf("kube-apiserver's watch %s did not end on an event without its previous value; this test no longer makes one", describeOpts(p.opts))
				}
			}
		})
	}
}

// etcd's own race (prevkv.go): a write applied while a watch is being
// created reaches it without its previous value, though etcd has it. The
// read-back gives it back on both sides, and no watch ends: a run's trace
// does not depend on how the scheduler met that race.
func TestPreviousValueEtcdLeftOutIsReadBack(t *testing.T) {
	for _, c := range prevKVCases {
		t.Run(c.name, func(t *testing.T) {
			s := playWithoutPrevKV(t, c, nil)
			for _, p := range s.open {
				for i, side := range p.sides {
					if side.ended {
						t.Errorf("%s's watch %s ended: %s", []string{"listwatch", "kube-apiserver"}[i], describeOpts(p.opts), describeAll(side.events))
					}
				}
			}
		})
	}
}

func (s *sides) update(t *testing.T, key string, labels ...string) {
	t.Helper()
	if _, err := s.w.Update(context.Background(), pod(key, labels...)); err != nil {
		t.Fatal(err)
	}
}

func (s *sides) remove(t *testing.T, key string) {
	t.Helper()
	ns, name, _ := strings.Cut(key, "/")
	if _, err := s.w.Delete(context.Background(), ns, name, listwatch.Preconditions{}); err != nil {
		t.Fatal(err)
	}
}
