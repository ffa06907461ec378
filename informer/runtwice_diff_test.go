package informer_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/informer"
	dt "github.com/cachelab/cachelab/internal/difftest"
)

// client-go: shared_informer.go RunWithContext (P23, and HasStarted,
// P24): Run on an informer
// that has started logs, through the context's logger at Info, a warning
// that running more than once is not allowed, and returns at once; the
// running informer goes on.
func TestRunTwiceWarns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		clSrv, cgSrv := dt.NewServer(), dt.NewServer()
		for _, s := range []*dt.Server{clSrv, cgSrv} {
			s.Write("ADDED", pod("ns/a"))
		}
		cl := informer.New(clSrv, informer.Options{ExampleObject: &unstructured.Unstructured{}})
		cg := cache.NewSharedIndexInformer(cgSrv, &unstructured.Unstructured{}, 0, cache.Indexers{})
		started := func() []bool { // P24
			return []bool{cg.(interface{ HasStarted() bool }).HasStarted(), cl.HasStarted()}
		}
		var startedAt [][]bool
		startedAt = append(startedAt, started())
		var wg sync.WaitGroup
		wg.Go(func() { cl.Run(ctx) })
		wg.Go(func() { cg.RunWithContext(ctx) })
		synctest.Wait()
		startedAt = append(startedAt, started())
		var clLines, cgLines []string
		sink := func(lines *[]string) logr.Logger {
			return funcr.New(func(prefix, args string) { *lines = append(*lines, args) }, funcr.Options{Verbosity: 0})
		}
		cl.Run(logr.NewContext(ctx, sink(&clLines)))
		cg.RunWithContext(logr.NewContext(ctx, sink(&cgLines)))
		if d := cmp.Diff(cgLines, clLines); d != "" {
			t.Errorf("a second Run logged (-client-go +cachelab):\n%s", d)
		}
		if len(clLines) != 1 {
			t.Errorf("cachelab's second Run logged %q, want one warning", clLines)
		}
		if d := cmp.Diff([]bool{cg.HasSynced()}, []bool{cl.HasSynced()}); d != "" {
			t.Errorf("the running informer (-client-go +cachelab):\n%s", d)
		}
		cancel()
		wg.Wait()
		startedAt = append(startedAt, started())
		for i, when := range []string{"before Run", "while it runs", "after it returned"} {
			if startedAt[i][0] != startedAt[i][1] {
				t.Errorf("HasStarted %s: client-go %t, cachelab %t", when, startedAt[i][0], startedAt[i][1])
			}
		}
		if want := [][]bool{{false, false}, {true, true}, {true, true}}; !cmp.Equal(want, startedAt) {
			t.Errorf("HasStarted before, during and after Run ([client-go cachelab]): %v", startedAt)
		}
	})
}
