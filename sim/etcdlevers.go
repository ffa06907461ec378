package sim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// The levers of kube-apiserver's storage on etcd (etcdWorld, and the
// worlds built on it): etcd restarted, its history compacted, a progress
// notification asked for, bytes stored under a key as they are; and
// those that take etcd's revision back (below). Those of an etcd cluster
// are in clusterlevers.go.

// The levers that take etcd's revision back: a snapshot of its data, a
// restore of that snapshot, and a restart on empty data. Each restarts
// the embedded etcd on the same ports, as restart-etcd does, so the
// informers keep running: etcd's client resumes their watches from the
// revision they had reached, which a restored or wiped etcd has not.

// embeddedOnly is the error for a lever an external etcd cannot pull.
func (w *etcdWorld) embeddedOnly() error {
	if w.etcd == nil {
		return fmt.Errorf("it needs the embedded etcd; this run uses an external one (--etcd-endpoints)")
	}
	return nil
}

// restart stops and starts the embedded etcd on the same ports through
// do (a restart, a snapshot's copy between the two), and tells each
// connection that it happened at etcd's revision then, which it returns.
func (w *etcdWorld) restart(do func(ctx context.Context) error) (int64, error) {
	if err := w.embeddedOnly(); err != nil {
		return 0, err
	}
	rev, err := w.r.revision()
	if err != nil {
		return 0, err
	}
	if err := do(w.r.ctx); err != nil {
		return 0, err
	}
	w.r.resumedAt(rev)
	return rev, nil
}

func etcdSnapshot(w *etcdWorld, a scenario.Args) error {
	r := w.r
	rev, err := w.restart(func(ctx context.Context) error { return w.etcd.Snapshot(ctx, a.Pos[0]) })
	if err != nil {
		return err
	}
	r.note(trace.LayerEtcd, "", fmt.Sprintf("etcd snapshot %s taken at rv %d (etcd stopped, its data copied, started again on the same ports)", a.Pos[0], rev))
	return nil
}

func etcdRestore(w *etcdWorld, a scenario.Args) error {
	return w.travel(trace.LeverEtcdRestore, fmt.Sprintf("etcd restored from snapshot %s", a.Pos[0]),
		func(ctx context.Context) error { return w.etcd.Restore(ctx, a.Pos[0]) })
}

func etcdWipe(w *etcdWorld, a scenario.Args) error {
	return w.travel(trace.LeverEtcdWipe, "etcd restarted on empty data", func(ctx context.Context) error { return w.etcd.Wipe(ctx) })
}

// travel restarts etcd with other data (do), and says what happened to
// its revision; lever names it (trace.Lever*).
func (w *etcdWorld) travel(lever, what string, do func(ctx context.Context) error) error {
	r := w.r
	before, err := w.restart(do)
	if err != nil {
		return err
	}
	r.etcdChanged() // other data: a held retry may not meet the same value
	// Revisions come again with other content.
	w.forget()
	after, err := r.revision()
	if err != nil {
		return err
	}
	how := "the same revision, other data"
	switch {
	case after < before:
		how = "resourceVersions go backwards"
	case after > before:
		how = "resourceVersions jump forwards"
	}
	r.world = append(r.world, trace.Event{Layer: trace.LayerEtcd, Kind: trace.KindWorld, Op: lever,
		RV: strconv.FormatInt(after, 10), PrevRV: strconv.FormatInt(before, 10), Detail: fmt.Sprintf("%s: revision %d -> %d (%s)", what, before, after, how)})
	return nil
}

// resumedAt tells each connection that etcd restarted under its open watches
// when it was at rev. etcd's client resumes each watch from rev+1,
// whatever etcd's revision is now; after a restore or a wipe it is lower,
// and etcd then sends such a watch nothing, not even progress, until a
// write reaches rev+1: the writes in between are never delivered.
// Settling is unaffected: an informer whose resourceVersion is past
// etcd's has caught up with it.
func (r *runner) resumedAt(rev int64) {
	for _, s := range r.sides {
		s.conn.Resumed(rev)
	}
}

// compact compacts etcd to its revision.
func compact(w *etcdWorld, _ scenario.Args) error {
	r := w.r
	rev, err := r.revision()
	if err != nil {
		return err
	}
	if _, err := w.client().Compact(r.ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		if errors.Is(err, rpctypes.ErrCompacted) {
			r.note(trace.LayerEtcd, "", fmt.Sprintf("compact: nothing to do, etcd is compacted at rv %d already (nothing was written since)", rev))
			return nil
		}
		return fmt.Errorf("compact to %d: %w", rev, err)
	}
	r.etcdChanged() // a held LIST at an older resourceVersion now gets 410
	r.world = append(r.world, trace.Event{Layer: trace.LayerEtcd, Kind: trace.KindWorld, Op: trace.LeverCompact, RV: strconv.FormatInt(rev, 10),
		Detail: fmt.Sprintf("compact: history before rv %d is gone", rev)})
	return nil
}

// cmdProgress asks etcd for a progress notification on each informer's
// connection. It always ends: when etcd would ignore the request, the
// trace says why instead of waiting for a bookmark that never comes.
func cmdProgress(r *runner, a scenario.Args) error {
	rev, err := r.revision()
	if err != nil {
		return err
	}
	r.note(trace.LayerEtcd, "", fmt.Sprintf("progress notification requested (etcd at rv %d)", rev))
	if c := r.caches(); c != nil {
		// Each kube-apiserver's own watch of etcd hears it; its cache
		// sends its watchers no bookmark for it (C3).
		for _, a := range c.apis {
			if err := a.RequestProgress(r.ctx); err != nil {
				return err
			}
		}
		r.note(trace.LayerCache, "", "the watch cache hears etcd's progress notification and passes nothing on: its watchers get bookmarks on its own clock")
		return nil
	}
	pairs := r.livePairs()
	if len(pairs) == 0 {
		r.note(trace.LayerSim, "", "no bookmark: no informer is running, so no watch is open")
		return nil
	}
	for _, p := range pairs {
		why := p[0].conn.ProgressBlocker(rev)
		if other := p[1].conn.ProgressBlocker(rev); other != why {
			// Settled sides have the same watches; if not, say both.
			why = fmt.Sprintf("%s: %s; %s: %s", trace.Cachelab, orNone(why), trace.ClientGo, orNone(other))
		}
		if why != "" {
			if l := p[0].rec.Informer; l != "" {
				why = l + ": " + why
			}
			r.note(trace.LayerSim, "", "no bookmark: "+why)
			return nil
		}
	}
	for _, s := range r.sides {
		if !r.live(s) {
			continue
		}
		// In a cluster, only once the member serving the connection has
		// applied etcd's revision: its bookmark says that revision.
		if err := r.waitMemberApplied(s, rev); err != nil {
			return err
		}
		s.conn.ShowNextBookmark()
		if err := s.conn.Base().RequestProgress(r.ctx); err != nil {
			return err
		}
	}
	return nil
}

// waitMemberApplied waits, within the settle timeout, until the member
// serving the side's connection has applied rev (memberApplied).
func (r *runner) waitMemberApplied(s *side, rev int64) error {
	deadline := time.Now().Add(r.opts.SettleTimeout)
	for !r.memberApplied(s, rev) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the etcd member serving %s's connection did not apply etcd's rv %d in %v", s.impl, rev, r.opts.SettleTimeout)
		}
		select {
		case <-time.After(time.Millisecond):
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
	}
	return nil
}

// wroteRaw is wrote for put-raw's bytes (or their removal) under ns/name:
// every watch whose range of keys holds them meets them, selector or not
// (the server cannot decode them to apply one, and fails the watch); an
// informer whose watch was narrowed away from them (a namespace of its
// own, or a field selector naming another namespace or object: E16)
// never hears of them, so settling asks etcd for a bookmark.
func (w *etcdWorld) wroteRaw(ns, name string) {
	for _, p := range w.r.livePairs() {
		cfg := p[0].cfg
		lw := listwatch.NewListerWatcher(w.client(), cfg.res, listwatch.Options{Namespace: cfg.namespace})
		reads, err := lw.Reads(metav1.ListOptions{LabelSelector: cfg.labels, FieldSelector: cfg.fields}, ns, name)
		unseen := err == nil && !reads
		p[0].unseenWrite, p[1].unseenWrite = unseen, unseen
	}
}

// cmdPutRaw stores text under the object's key as it is (E12).
func cmdPutRaw(w *etcdWorld, a scenario.Args) error {
	r := w.r
	key := a.Pos[0]
	ns, name, _ := strings.Cut(key, "/")
	rev, err := w.raw.PutRaw(r.ctx, ns, name, []byte(a.Pos[1]))
	if err != nil {
		return err
	}
	r.etcdChanged()
	w.wroteRaw(ns, name)
	r.world = append(r.world, trace.Event{Layer: trace.LayerEtcd, Kind: trace.KindWrite, Op: "put-raw", Key: key, RV: strconv.FormatInt(rev, 10),
		Detail: fmt.Sprintf("put-raw %s %q at rv %d: not an object, kube-apiserver cannot decode it", key, a.Pos[1], rev)})
	return nil
}

// cmdDeleteRaw removes what put-raw stored (E12).
func cmdDeleteRaw(w *etcdWorld, a scenario.Args) error {
	r := w.r
	key := a.Pos[0]
	ns, name, _ := strings.Cut(key, "/")
	rev, err := w.raw.DeleteRaw(r.ctx, ns, name)
	if err != nil {
		return err
	}
	r.etcdChanged()
	w.wroteRaw(ns, name)
	r.world = append(r.world, trace.Event{Layer: trace.LayerEtcd, Kind: trace.KindWrite, Op: "delete-raw", Key: key, RV: strconv.FormatInt(rev, 10),
		Detail: fmt.Sprintf("delete-raw %s (at rv %d)", key, rev)})
	return nil
}

// restartEtcd stops the embedded etcd and starts it again on the same
// data and ports.
func restartEtcd(w *etcdWorld, a scenario.Args) error {
	if _, err := w.restart(func(ctx context.Context) error { return w.etcd.Restart(ctx) }); err != nil {
		return err
	}
	w.r.note(trace.LayerEtcd, "", "etcd restarted (same data, same ports)")
	return nil
}
