package listwatch_test

import (
	"context"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

func startEtcd(t testing.TB) *listwatch.Embedded {
	t.Helper()
	ctx := testdeadline.Context(t)
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	return e
}

func TestEmbeddedLifecycle(t *testing.T) {
	ctx := context.Background()
	e := startEtcd(t)
	if _, err := e.Client().Put(ctx, "/registry/pods/a/x", "{}"); err != nil {
		t.Fatal(err)
	}
	rev, err := e.Revision(ctx)
	if err != nil || rev < 2 {
		t.Fatalf("Revision = %d, %v", rev, err)
	}
	if err := e.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	endpoints := e.Endpoints()
	if err := e.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.Endpoints(); got[0] != endpoints[0] {
		t.Errorf("endpoints after restart = %v, want %v", got, endpoints)
	}
	resp, err := e.Client().Get(ctx, "/registry/pods/a/x")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("after restart: %v, %v", resp, err)
	}
	t.Logf("endpoints %v, revision %d", endpoints, rev)
}

// A restart is a crash: the server drops the streams it serves at once,
// as a dead process would, instead of a graceful stop that waits for
// them (a watch never ends on its own, so etcd would wait its request
// timeout, about 5 s). To the client it is a lost connection: its watch
// resumes on the restarted server from the last revision it saw, with no
// error and nothing missed.
func TestEmbeddedRestartIsACrash(t *testing.T) {
	t.Parallel() // it waits on etcd, mostly (main_test.go)
	ctx := testdeadline.Context(t)
	e := startEtcd(t)
	client := connectTo(ctx, t, e)
	put := func(c *clientv3.Client, key string) int64 { return putEmpty(ctx, t, c, key) }
	before := put(client, "/registry/pods/ns0/a")
	watch := client.Watch(ctx, "/registry/pods/", clientv3.WithPrefix(), clientv3.WithRev(before))
	if resp := <-watch; resp.Err() != nil || len(resp.Events) != 1 || resp.Events[0].Kv.ModRevision != before {
		t.Fatalf("before the restart: %+v, %v", resp, resp.Err())
	}
	if err := e.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	after := put(e.Client(), "/registry/pods/ns0/b")
	resp, ok := <-watch
	if !ok || resp.Err() != nil || resp.Canceled || len(resp.Events) != 1 || resp.Events[0].Kv.ModRevision != after {
		t.Fatalf("after the restart the watch gave %+v (open %v, error %v); want the write at rv %d", resp, ok, resp.Err(), after)
	}
}

// connectTo is a client of e, closed when the test ends.
func connectTo(ctx context.Context, t testing.TB, e *listwatch.Embedded) *clientv3.Client {
	t.Helper()
	client, err := listwatch.Connect(ctx, e.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// putEmpty writes "{}" under key and returns the write's revision.
func putEmpty(ctx context.Context, t testing.TB, c *clientv3.Client, key string) int64 {
	t.Helper()
	resp, err := c.Put(ctx, key, "{}")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}
