package listwatch

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// FillPreviousValues wraps an etcd client's Watcher so that a watch asked
// WithPrevKV gets every event's previous value that etcd still has, also
// where etcd's server left it out by a race of its own. Connect installs
// it on every client it makes (so both worlds have it: listwatch, and
// kube-apiserver's storage in apistorage); it is exported for tests that
// place something beneath it.
//
// etcd's watch server (v3.7.3, etcdserver/api/v3rpc/watch.go) registers a
// new watch (recvLoop: watchStream.Watch) before it records that the
// watch wants previous values (sws.prevKV[id] = true), and its sendLoop
// reads that record when an event arrives. A write applied in between
// reaches the watch without its previous value. kube-apiserver ends such
// a watch with a 500 (E17), so a write made just after a watch starts
// would, once in a great while on a loaded machine, break one informer's
// watch and not another's: a run's trace would depend on the scheduler.
// The previous value is read back here, at the event's revision less one,
// as etcd's sendLoop reads it. Where that revision is compacted the read
// fails and the event goes on without it, as etcd would have sent it: E17
// stays what a compaction causes.
func FillPreviousValues(w clientv3.Watcher, kv clientv3.KV) clientv3.Watcher {
	return &prevKVWatcher{Watcher: w, kv: kv}
}

type prevKVWatcher struct {
	clientv3.Watcher
	kv clientv3.KV
}

func (w *prevKVWatcher) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	in := w.Watcher.Watch(ctx, key, opts...)
	var op clientv3.Op
	for _, o := range opts {
		o(&op)
	}
	if !op.IsPrevKV() {
		return in
	}
	out := make(chan clientv3.WatchResponse)
	go func() {
		defer close(out)
		for resp := range in {
			for _, ev := range resp.Events {
				if ev.PrevKv == nil && !ev.IsCreate() {
					w.fill(ctx, ev)
				}
			}
			select {
			case out <- resp:
			case <-ctx.Done():
				// The client closes in once it has seen ctx end.
				for range in {
				}
				return
			}
		}
	}()
	return out
}

// fill reads ev's previous value from etcd, as etcd's sendLoop does: the
// key at the revision before the event's. A failed read (the revision is
// compacted, etcd is gone, ctx ended) leaves the event as etcd sent it.
func (w *prevKVWatcher) fill(ctx context.Context, ev *clientv3.Event) {
	resp, err := w.kv.Get(ctx, string(ev.Kv.Key), clientv3.WithRev(ev.Kv.ModRevision-1))
	if err == nil && len(resp.Kvs) == 1 {
		ev.PrevKv = resp.Kvs[0]
	}
}
