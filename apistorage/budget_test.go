package apistorage

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/cacher"

	"github.com/cachelab/cachelab/internal/testdeadline"
)

// The cacher's dispatcher waits up to dispatchBudget, not kube-apiserver's
// 100 ms (none at all for a fresh cacher), for a watcher whose own
// goroutine is behind (walltime.go). Here the cacher's watch is read
// directly, without Watch's relay, and not at all while 60 objects are
// written, so its goroutine is held behind for the whole burst: with the
// budget as kube-apiserver has it, the watcher is closed after about 20
// events; widened, it gets all 60 once it is read. C9.
func TestDispatcherWaitsForABehindWatcher(t *testing.T) {
	ctx := testdeadline.Context(t)
	s, create := cachedWorld(t, ctx)
	defer s.Close()
	if budget, maxBudget := dispatchBudgetOf(s.current().cacher); budget != dispatchBudget || maxBudget != dispatchBudget {
		t.Fatalf("the dispatch budget is %v (at most %v), want %v", budget, maxBudget, dispatchBudget)
	}
	w, err := s.api().Watch(ctx, "/pods/", storage.ListOptions{ResourceVersion: "1", Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const count = 60
	for i := range count {
		create(fmt.Sprintf("o%03d", i))
	}
	for i := range count {
		if _, ok := <-w.ResultChan(); !ok {
			t.Fatalf("the cacher closed the watch after %d of %d events", i, count)
		}
	}
}

// dispatchBudgetOf is c's dispatch budget now and its maximum.
func dispatchBudgetOf(c *cacher.Cacher) (budget, max time.Duration) {
	st := reflect.ValueOf(c).Elem().FieldByName("dispatchTimeoutBudget").Elem().Elem()
	return time.Duration(st.FieldByName("budget").Int()), time.Duration(st.FieldByName("maxBudget").Int())
}
