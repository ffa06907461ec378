package deltafifo_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/deltafifo"
	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// A delta whose key cannot be computed any more (here: a key function that
// starts refusing b/y after it was queued) is popped with the run and ends
// it. Unreachable with a deterministic key function, so scripted directly.
// client-go: the_real_fifo.go PopBatch (R6)
func TestRealFIFOPopBatchKeyFailure(t *testing.T) {
	poisoned := false
	keyFunc := func(obj any) (string, error) {
		key, err := store.MetaNamespaceKeyFunc(obj)
		if poisoned && key == "b/y" {
			return "", errors.New("key refused")
		}
		return key, err
	}
	cl := deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions{AtomicEvents: true, KeyFunction: keyFunc})
	cg := cache.NewRealFIFOWithOptions(cache.RealFIFOOptions{AtomicEvents: true, KeyFunction: keyFunc})
	for _, obj := range []any{ax1, by1, cz5, Pop0} {
		if err := cl.Add(obj); err != nil {
			t.Fatal(err)
		}
		if err := cg.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	poisoned = true
	record := func(out *[][]D) (func([]deltafifo.Delta, bool) error, func([]cache.Delta, bool) error, func(any, bool) error) {
		return func(ds []deltafifo.Delta, _ bool) error { *out = append(*out, Norm(ds).([]D)); return nil },
			func(ds []cache.Delta, _ bool) error { *out = append(*out, Norm(ds).([]D)); return nil },
			func(obj any, _ bool) error { *out = append(*out, Norm(obj).([]D)); return nil }
	}
	var clGot, cgGot [][]D
	clBatch, _, clSingle := record(&clGot)
	_, cgBatch, cgSingle := record(&cgGot)
	for range 2 {
		if err := cl.PopBatch(clBatch, clSingle); err != nil {
			t.Fatal(err)
		}
		if err := cg.PopBatch(cgBatch, cgSingle); err != nil {
			t.Fatal(err)
		}
	}
	if d := cmp.Diff(cgGot, clGot); d != "" {
		t.Fatalf("popped (-client-go +cachelab):\n%s", d)
	}
	if len(clGot) != 2 || len(clGot[0]) != 2 || len(clGot[1]) != 2 {
		t.Errorf("runs = %d, want [a/x b/y] then [c d/p]: %v", len(clGot), clGot)
	}
}
