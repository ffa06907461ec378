package store_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// List and ListKeys come in key order whatever the writes before them
// (adds, updates of stored keys, deletes, Replace), including while other
// goroutines list: the sorted keys are kept between lists and rebuilt
// only after a key comes or goes. (client-go's order is map order; key
// order is one of its permutations, which makes traces stable.)
func TestListIsInKeyOrder(t *testing.T) {
	s := store.New(store.Options{})
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string]bool{}
	check := func(step int) {
		t.Helper()
		keys := s.ListKeys()
		if !slices.IsSorted(keys) || len(keys) != len(want) {
			t.Fatalf("step %d: ListKeys = %v, want the %d stored keys sorted", step, keys, len(want))
		}
		for i, obj := range s.List() {
			if k, _ := store.MetaNamespaceKeyFunc(obj); k != keys[i] {
				t.Fatalf("step %d: List()[%d] is %s, ListKeys()[%d] is %s", step, i, k, i, keys[i])
			}
		}
	}
	var readers sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if keys := s.ListKeys(); !slices.IsSorted(keys) {
					t.Errorf("a concurrent ListKeys is not sorted: %v", keys)
					return
				}
				_ = s.List()
			}
		})
	}
	for step := range 2000 {
		k := fmt.Sprintf("ns/o%03d", rng.IntN(200))
		switch op := rng.IntN(10); {
		case op < 6:
			_ = s.Add(Pod(k, RV(step+1)))
			want[k] = true
		case op < 9:
			_ = s.Delete(Pod(k))
			delete(want, k)
		default:
			want = map[string]bool{}
			var list []any
			for range rng.IntN(20) {
				k := fmt.Sprintf("ns/o%03d", rng.IntN(200))
				list = append(list, Pod(k, RV(step+1)))
				want[k] = true
			}
			_ = s.Replace(list, fmt.Sprint(step+1))
		}
		check(step)
	}
	close(stop)
	readers.Wait()
}
