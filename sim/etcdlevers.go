package sim

import (
	"fmt"
	"strconv"

	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

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

func etcdSnapshot(w *etcdWorld, a scenario.Args) error {
	r := w.r
	if err := w.embeddedOnly(); err != nil {
		return err
	}
	rev, err := r.revision()
	if err != nil {
		return err
	}
	if err := w.etcd.Snapshot(r.ctx, a.Pos[0]); err != nil {
		return err
	}
	r.resumedAt(rev)
	r.note(trace.LayerEtcd, "", fmt.Sprintf("etcd snapshot %s taken at rv %d (etcd stopped, its data copied, started again on the same ports)", a.Pos[0], rev))
	return nil
}

func etcdRestore(w *etcdWorld, a scenario.Args) error {
	r := w.r
	if err := w.embeddedOnly(); err != nil {
		return err
	}
	return w.travel(trace.LeverEtcdRestore, fmt.Sprintf("etcd restored from snapshot %s", a.Pos[0]), func() error { return w.etcd.Restore(r.ctx, a.Pos[0]) })
}

func etcdWipe(w *etcdWorld, a scenario.Args) error {
	r := w.r
	if err := w.embeddedOnly(); err != nil {
		return err
	}
	return w.travel(trace.LeverEtcdWipe, "etcd restarted on empty data", func() error { return w.etcd.Wipe(r.ctx) })
}

// travel restarts etcd with other data (restart), and says what happened
// to its revision; lever names it (trace.Lever*).
func (w *etcdWorld) travel(lever, what string, restart func() error) error {
	r := w.r
	before, err := r.revision()
	if err != nil {
		return err
	}
	if err := restart(); err != nil {
		return err
	}
	r.resumedAt(before)
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
