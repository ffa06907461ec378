package listwatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/cachelab/cachelab/listwatch"
)

func startEtcd(t testing.TB) *listwatch.Embedded {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
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
