package store_test

import (
	"testing"

	"k8s.io/client-go/tools/cache"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// client-go: store.go NewStore, NewIndexer, WithTransformer (S2, S3): the
// same writes through the constructors of client-go's names, with the
// shared transformer, read back the same on both sides.
func TestNewStoreAndNewIndexer(t *testing.T) {
	cl := []store.Indexer{
		store.NewStore(store.MetaNamespaceKeyFunc, store.WithTransformer(Transform)).(store.Indexer),
		store.NewIndexer(store.MetaNamespaceKeyFunc, store.Indexers{"app": IndexByApp}, store.WithTransformer(Transform)),
	}
	cg := []cache.Indexer{
		cache.NewStore(cache.MetaNamespaceKeyFunc, cache.WithTransformer(Transform)).(cache.Indexer),
		cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{"app": IndexByApp}, cache.WithTransformer(Transform)),
	}
	for i := range cl {
		for _, obj := range []any{ax1, ay3, ax2} {
			if a, b := NormErr(cl[i].Add(obj)), NormErr(cg[i].Add(obj)); a != b {
				t.Fatalf("store %d: Add: cachelab %s, client-go %s", i, a, b)
			}
		}
		if d := Diff(SortedByKey(cl[i].List()), SortedByKey(cg[i].List())); d != "" {
			t.Errorf("store %d: List (-client-go +cachelab):\n%s", i, d)
		}
		a, aErr := cl[i].ByIndex("app", "web")
		b, bErr := cg[i].ByIndex("app", "web")
		if d := Diff(SortedByKey(a), SortedByKey(b)); d != "" || NormErr(aErr) != NormErr(bErr) {
			t.Errorf("store %d: ByIndex: %v / %v (-client-go +cachelab):\n%s", i, aErr, bErr, d)
		}
	}
}
