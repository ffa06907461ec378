package apistorage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/storage"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/listwatch"
)

// The cacher's dispatcher waits up to dispatchBudget, not kube-apiserver's
// 100 ms (none at all for a fresh cacher), for a watcher whose own
// goroutine is behind (walltime.go). Here the cacher's watch is read
// directly, without Watch's relay, and not at all while 60 objects are
// written, so its goroutine is held behind for the whole burst: with the
// budget as kube-apiserver has it, the watcher is closed after about 20
// events; widened, it gets all 60 once it is read. C9.
func TestDispatcherWaitsForABehindWatcher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := New(ctx, e.Client(), listwatch.Pods, Options{Cache: true, Clock: clocktesting.NewFakeClock(time.Unix(0, 0))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if budget, maxBudget := dispatchBudgetOf(s.current().cacher); budget != dispatchBudget || maxBudget != dispatchBudget {
		t.Fatalf("the dispatch budget is %v (at most %v), want %v", budget, maxBudget, dispatchBudget)
	}
	w, err := s.api().Watch(ctx, "/pods/", storage.ListOptions{ResourceVersion: "1", Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	n := 0
	writer := listwatch.NewWriter(e.LocalKV(), listwatch.Pods, listwatch.WriterOptions{
		NewUID: func() types.UID { n++; return types.UID(fmt.Sprint(n)) },
	})
	const count = 60
	for i := range count {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("Pod")
		u.SetNamespace("ns0")
		u.SetName(fmt.Sprintf("o%03d", i))
		if _, err := writer.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	for i := range count {
		if _, ok := <-w.ResultChan(); !ok {
			t.Fatalf("the cacher closed the watch after %d of %d events", i, count)
		}
	}
}
