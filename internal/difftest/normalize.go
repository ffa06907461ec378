package difftest

import (
	"errors"
	"fmt"
	"sort"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/fifo"
	"github.com/cachelab/cachelab/store"
)

// The neutral forms that Norm produces. Both sides' values map onto these.
type (
	// D is one delta.
	D struct {
		Type   string
		Object any
	}
	// Tombstone is a DeletedFinalStateUnknown.
	Tombstone struct {
		Key string
		Obj any
	}
	// ReplacedAll is a ReplacedAllInfo.
	ReplacedAll struct {
		RV      string
		Objects []any
	}
	// BookmarkRV is a BookmarkInfo.
	BookmarkRV struct{ RV string }
	// SyncAll is a SyncAllInfo.
	SyncAll struct{}
)

// Norm maps a value from either side onto the neutral forms, recursively.
// Objects (*unstructured.Unstructured and anything else) are kept as they
// are: go-cmp compares them by value.
func Norm(v any) any {
	switch x := v.(type) {
	case deltafifo.Deltas:
		return normDeltas(len(x), func(i int) (string, any) { return string(x[i].Type), x[i].Object })
	case []deltafifo.Delta:
		return Norm(deltafifo.Deltas(x))
	case cache.Deltas:
		return normDeltas(len(x), func(i int) (string, any) { return string(x[i].Type), x[i].Object })
	case []cache.Delta:
		return Norm(cache.Deltas(x))
	case deltafifo.Delta:
		return D{string(x.Type), Norm(x.Object)}
	case cache.Delta:
		return D{string(x.Type), Norm(x.Object)}
	case store.DeletedFinalStateUnknown:
		return Tombstone{x.Key, Norm(x.Obj)}
	case cache.DeletedFinalStateUnknown:
		return Tombstone{x.Key, Norm(x.Obj)}
	case deltafifo.ReplacedAllInfo:
		return ReplacedAll{x.ResourceVersion, normSlice(x.Objects)}
	case cache.ReplacedAllInfo:
		return ReplacedAll{x.ResourceVersion, normSlice(x.Objects)}
	case deltafifo.BookmarkInfo:
		return BookmarkRV{x.ResourceVersion}
	case cache.BookmarkInfo:
		return BookmarkRV{x.ResourceVersion}
	case deltafifo.SyncAllInfo, cache.SyncAllInfo:
		return SyncAll{}
	case []any:
		return normSlice(x)
	}
	return v
}

func normDeltas(n int, at func(int) (string, any)) []D {
	out := make([]D, n)
	for i := range out {
		t, obj := at(i)
		out[i] = D{t, Norm(obj)}
	}
	return out
}

func normSlice(xs []any) []any {
	if xs == nil {
		return nil
	}
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = Norm(x)
	}
	return out
}

// NormErr maps an error from either side onto a comparable string: "" for
// nil, "closed" for either closed-queue error when it has client-go's text
// (so a transcript reads short and a different text still shows),
// otherwise its kind and text.
func NormErr(err error) string {
	if err == nil {
		return ""
	}
	if (errors.Is(err, fifo.ErrClosed) || errors.Is(err, cache.ErrFIFOClosed)) && err.Error() == cache.ErrFIFOClosed.Error() {
		return "closed"
	}
	kind := "error"
	var k1 store.KeyError
	var k2 cache.KeyError
	if errors.As(err, &k1) || errors.As(err, &k2) {
		kind = "KeyError"
	}
	return kind + ": " + err.Error()
}

// CatchPanic runs f and returns the panic value's text, or "" if f did not
// panic.
func CatchPanic(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
			if msg == "" {
				msg = "panic"
			}
		}
	}()
	f()
	return ""
}

// Diff compares a cachelab value with a client-go value after Norm and
// returns "" if they are equal, else a go-cmp report (-client-go
// +cachelab). It treats nil and empty slices and maps alike (client-go is
// not consistent about them either).
func Diff(cl, cg any) string {
	return diffNormed(Norm(cl), Norm(cg))
}

// diffNormed checks equality first: cmp.Equal is much cheaper than building
// a report, and the report is only wanted on a divergence.
func diffNormed(cl, cg any) string {
	if cmp.Equal(cg, cl, cmpopts.EquateEmpty()) {
		return ""
	}
	return cmp.Diff(cg, cl, cmpopts.EquateEmpty())
}

// SortedByKey sorts a list of objects by their MetaNamespaceKeyFunc key
// (objects without one go last, in their order): for comparing map-order
// results as sorted sets.
func SortedByKey(objs []any) []any {
	out := normSlice(objs)
	sort.SliceStable(out, func(i, j int) bool { return sortKey(out[i]) < sortKey(out[j]) })
	return out
}

func sortKey(v any) string {
	if k, err := store.MetaNamespaceKeyFunc(v); err == nil {
		return k
	}
	return fmt.Sprintf("~%v", v)
}

// Sorted returns a sorted copy of s, for comparing map-order key lists.
func Sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
