package store_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// List and ListKeys come in key order whatever the writes before them
// (adds, updates of stored keys, deletes, Replace), including while other
// goroutines list: the objects are kept in key order between lists, and
// the first list after a write catches up on the keys written. (client-go's
// order is map order; key order is one of its permutations, which makes
// traces stable.)
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

// FuzzKeyOrder checks List and ListKeys against a plain map, sorted, after
// random runs of writes (adds, updates, deletes, transactions, Replace)
// of any length between lists: the store keeps its objects in key order
// by catching up on the keys written since the last list (a merge), or,
// after a Replace or a long run of writes, by sorting them all again
// (a rebuild), and both must land on exactly the map's content.
func FuzzKeyOrder(f *testing.F) {
	f.Add([]byte{0, 5, 0, 9, 7, 0, 2, 5, 0, 1, 7, 0})
	f.Add(slices.Repeat([]byte{0, 3, 1, 200, 2, 3, 0, 17}, 40))
	f.Add(append(slices.Repeat([]byte{1, 7, 0, 9}, 90), 7, 0, 6, 3, 7, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		s := store.New(store.Options{})
		want := map[string]any{}
		for i := 0; i+1 < len(data); i += 2 {
			k := fmt.Sprintf("ns/o%03d", data[i+1])
			switch data[i] % 8 {
			case 0, 1: // add or update
				want[k] = Pod(k, RV(i))
				_ = s.Add(want[k])
			case 2, 3:
				delete(want, k)
				_ = s.Delete(Pod(k))
			case 4: // a transaction: update k, delete the key after it
				next := fmt.Sprintf("ns/o%03d", data[i+1]+1)
				want[k] = Pod(k, RV(i))
				delete(want, next)
				_ = s.Transaction(store.Transaction{Object: want[k], Type: store.TransactionTypeUpdate},
					store.Transaction{Object: Pod(next), Type: store.TransactionTypeDelete})
			case 5: // a Replace with every other stored key, then k
				want = everyOther(want)
				want[k] = Pod(k, RV(i))
				_ = s.Replace(slices.Collect(maps.Values(want)), fmt.Sprint(i))
			default:
				checkKeyOrder(t, s, want)
			}
		}
		checkKeyOrder(t, s, want)
	})
}

// everyOther keeps every other key of m, in key order.
func everyOther(m map[string]any) map[string]any {
	out := map[string]any{}
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i%2 == 0 {
			out[k] = m[k]
		}
	}
	return out
}

// checkKeyOrder fails unless s lists exactly want, in key order, with
// the very objects stored.
func checkKeyOrder(t *testing.T, s *store.Cache, want map[string]any) {
	t.Helper()
	keys, objs := s.ListKeys(), s.List()
	if wantKeys := slices.Sorted(maps.Keys(want)); !slices.Equal(keys, wantKeys) {
		t.Fatalf("ListKeys = %v, want %v", keys, wantKeys)
	}
	if len(objs) != len(keys) {
		t.Fatalf("List has %d objects, ListKeys %d keys", len(objs), len(keys))
	}
	for i, k := range keys {
		if objs[i] != want[k] {
			t.Fatalf("List()[%d] is %v, want the object stored under %s", i, objs[i], k)
		}
	}
}
