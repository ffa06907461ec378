package listwatch_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/internal/testcerts"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

// The Writer and ListerWatcher work against an etcd reached only by its
// endpoints, over TLS with client certificates, as against a real cluster.
func TestExternalEtcdWithTLS(t *testing.T) {
	ctx := testdeadline.Context(t)
	files := testcerts.Write(t, t.TempDir())
	server, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{Dir: t.TempDir(), TLS: files})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Close() })
	if got := server.Endpoints()[0]; got[:8] != "https://" {
		t.Fatalf("endpoint %s is not https", got)
	}

	client, err := listwatch.Connect(ctx, listwatch.ClientOptions{Endpoints: server.Endpoints(), TLS: files})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	w := listwatch.NewWriter(client, listwatch.Pods, listwatch.WriterOptions{})
	lw := listwatch.NewListerWatcher(client, listwatch.Pods, listwatch.Options{})
	created, err := w.Create(ctx, pod("a/x"))
	if err != nil {
		t.Fatal(err)
	}
	watcher, err := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: created.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	y, err := w.Create(ctx, pod("a/y"))
	if err != nil {
		t.Fatal(err)
	}
	if e := describe(next(t, watcher)); e != "ADDED a/y@"+y.GetResourceVersion() {
		t.Errorf("watch over TLS: %s", e)
	}
	list, err := lw.ListWithContext(ctx, metav1.ListOptions{})
	if err != nil || list == nil {
		t.Fatalf("list over TLS: %v", err)
	}

	noCert, cancelNoCert := context.WithTimeout(ctx, 3*time.Second)
	defer cancelNoCert()
	if c, err := listwatch.Connect(noCert, listwatch.ClientOptions{Endpoints: server.Endpoints(),
		TLS: listwatch.TLSFiles{CAFile: files.CAFile}}); err == nil {
		c.Close()
		t.Error("a client without a certificate was let in")
	}
	if _, err := listwatch.Connect(ctx, listwatch.ClientOptions{}); err == nil {
		t.Error("Connect with no endpoints did not fail")
	}
}
