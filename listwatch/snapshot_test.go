package listwatch_test

import (
	"errors"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

// Restore takes etcd back to a snapshot's revision, and Wipe to an empty
// etcd at revision 1: a client's watch resumes from the revision it had
// reached, which etcd has not, and stays silent until etcd passes it
// (etcd's watchable store sends a future watch only revisions from its
// start). Writes at the revisions in between are never delivered.
func TestEmbeddedSnapshotRestoreWipe(t *testing.T) {
	t.Parallel() // it waits on etcd, mostly (main_test.go)
	ctx := testdeadline.Context(t)
	e := startEtcd(t)
	client := connectTo(ctx, t, e)
	put := func(key string) int64 { return putEmpty(ctx, t, client, key) }
	revision := func() int64 {
		t.Helper()
		rev, err := e.Revision(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	put("/registry/pods/ns0/a")
	if err := e.Snapshot(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	at := revision()
	watch := client.Watch(ctx, "/registry/pods/", clientv3.WithPrefix(), clientv3.WithRev(at+1))
	put("/registry/pods/ns0/b")
	last := put("/registry/pods/ns0/c")
	for seen := 0; seen < 2; {
		resp := <-watch
		if resp.Err() != nil {
			t.Fatal(resp.Err())
		}
		seen += len(resp.Events)
	}

	if err := e.Restore(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if got := revision(); got != at {
		t.Fatalf("revision after restore = %d, want the snapshot's %d", got, at)
	}
	if resp, err := client.Get(ctx, "/registry/pods/ns0/b"); err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("after restore, a key written after the snapshot: %v, %v; want none", resp, err)
	}
	var reused int64
	for range last - at {
		reused = put("/registry/pods/ns0/d") // revisions the watch saw once already
	}
	if reused != last {
		t.Fatalf("writes after the restore reached rv %d, want %d", reused, last)
	}
	next := put("/registry/pods/ns0/e")
	resp := <-watch
	if resp.Err() != nil || len(resp.Events) != 1 || resp.Events[0].Kv.ModRevision != next {
		t.Fatalf("the resumed watch gave %+v (error %v); want only the write at rv %d, past the one it had reached", resp, resp.Err(), next)
	}

	if err := e.Wipe(ctx); err != nil {
		t.Fatal(err)
	}
	if got := revision(); got != 1 {
		t.Errorf("revision after wipe = %d, want 1", got)
	}
	if err := e.Restore(ctx, "s1"); err != nil {
		t.Fatalf("a snapshot survives a wipe: %v", err)
	}
	if got := revision(); got != at {
		t.Errorf("revision after restoring over a wipe = %d, want %d", got, at)
	}
	if err := e.Restore(ctx, "s2"); !errors.Is(err, listwatch.ErrNoSnapshot) {
		t.Errorf("Restore of a snapshot never taken = %v, want ErrNoSnapshot", err)
	}
	if err := e.Snapshot(ctx, "../x"); err == nil {
		t.Error("Snapshot(../x) = nil, want an error: a name is one file name")
	}
}
