package deltafifo_test

import (
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/fifo"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// client-go: fifo.go ErrFIFOClosed, delta_fifo.go ErrZeroLengthDeltasObject,
// the_real_fifo.go NewRealFIFOWithOptions (R7): the errors and panics a
// caller can see have client-go's texts.
func TestErrorAndPanicTexts(t *testing.T) {
	same := func(what, cl, cg string) {
		t.Helper()
		if cl != cg {
			t.Errorf("%s: cachelab %q, client-go %q", what, cl, cg)
		}
	}
	same("closed queue", fifo.ErrClosed.Error(), cache.ErrFIFOClosed.Error())
	same("zero-length deltas", deltafifo.ErrZeroLengthDeltas.Error(), cache.ErrZeroLengthDeltasObject.Error())
	known := store.New(store.Options{})
	for _, o := range []struct {
		name string
		cl   deltafifo.RealFIFOOptions
		cg   cache.RealFIFOOptions
	}{
		{"atomic with known objects", deltafifo.RealFIFOOptions{AtomicEvents: true, KnownObjects: known},
			cache.RealFIFOOptions{AtomicEvents: true, KnownObjects: cache.NewStore(cache.MetaNamespaceKeyFunc)}},
		{"unlocked without atomic", deltafifo.RealFIFOOptions{UnlockWhileProcessing: true, KnownObjects: known},
			cache.RealFIFOOptions{UnlockWhileProcessing: true, KnownObjects: cache.NewStore(cache.MetaNamespaceKeyFunc)}},
		{"non-atomic without known objects", deltafifo.RealFIFOOptions{}, cache.RealFIFOOptions{}},
		{"bookmarks without atomic", deltafifo.RealFIFOOptions{EmitDeltaTypeBookmark: true, KnownObjects: known},
			cache.RealFIFOOptions{EmitDeltaTypeBookmark: true, KnownObjects: cache.NewStore(cache.MetaNamespaceKeyFunc)}},
	} {
		same(o.name,
			dt.CatchPanic(func() { deltafifo.NewRealFIFO(o.cl) }),
			dt.CatchPanic(func() { cache.NewRealFIFOWithOptions(o.cg) }))
	}
}
