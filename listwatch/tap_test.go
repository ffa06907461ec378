package listwatch_test

import (
	"context"
	"fmt"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// tap records what an etcd client's watches were asked for and what
// they received: the ground truth of what etcd handed listwatch's side,
// for a differing watch's message and for etcdSkipped.
type tap struct {
	clientv3.Watcher
	mu      sync.Mutex
	log     []string
	watches []*tapped
}

// tapped is one etcd watch as its client received it, in order.
type tapped struct {
	key   string
	start int64
	seq   []tapItem
}

type tapItem struct {
	rev      int64 // an event's mod revision, or a progress notification's
	progress bool
}

func (tp *tap) note(format string, args ...any) {
	tp.log = append(tp.log, fmt.Sprintf(format, args...))
}

func (tp *tap) String() string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return strings.Join(tp.log, "\n")
}

func (tp *tap) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	tw := &tapped{key: key, start: clientv3.OpGet(key, opts...).Rev()}
	tp.mu.Lock()
	tp.watches = append(tp.watches, tw)
	id := len(tp.watches)
	tp.note("w%d: watch %s from rev %d", id, key, tw.start)
	tp.mu.Unlock()
	in := tp.Watcher.Watch(ctx, key, opts...)
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		for resp := range in {
			tp.record(id, tw, resp)
			select {
			case out <- resp:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

func (tp *tap) record(id int, tw *tapped, resp clientv3.WatchResponse) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	var revs []int64
	for _, e := range resp.Events {
		revs = append(revs, e.Kv.ModRevision)
		tw.seq = append(tw.seq, tapItem{rev: e.Kv.ModRevision})
	}
	if resp.IsProgressNotify() {
		tw.seq = append(tw.seq, tapItem{rev: resp.Header.Revision, progress: true})
	}
	tp.note("w%d: header %d events %v progress %v err %v", id, resp.Header.Revision, revs, resp.IsProgressNotify(), resp.Err())
}

// etcdSkipped reports whether etcd's client handed one of the tapped
// watches whose prefix and start cover a change to key at rev a progress
// notification at or past rev before (or without) the event at rev:
// etcd vouching for a revision whose event it had not delivered.
func (tp *tap) etcdSkipped(key string, rev int64) bool {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	for _, tw := range tp.watches {
		if !strings.HasPrefix(key, tw.key) || tw.start > rev {
			continue
		}
		for _, it := range tw.seq {
			if !it.progress && it.rev == rev {
				break // delivered in order
			}
			if it.progress && it.rev >= rev {
				return true
			}
		}
	}
	return false
}
