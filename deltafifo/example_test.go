package deltafifo_test

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/store"
)

func pod(name, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, ResourceVersion: rv}}
}

// show prints deltas as "Type name@rv".
func show(deltas []deltafifo.Delta, initial bool) {
	var parts []string
	for _, d := range deltas {
		switch o := d.Object.(type) {
		case metav1.Object:
			parts = append(parts, fmt.Sprintf("%s %s@%s", d.Type, o.GetName(), o.GetResourceVersion()))
		case deltafifo.DeletedFinalStateUnknown:
			parts = append(parts, fmt.Sprintf("%s tombstone(%s)", d.Type, o.Key))
		case deltafifo.ReplacedAllInfo:
			parts = append(parts, fmt.Sprintf("%s rv=%s (%d objects)", d.Type, o.ResourceVersion, len(o.Objects)))
		}
	}
	fmt.Printf("[%s] initial=%v\n", strings.Join(parts, ", "), initial)
}

// DeltaFIFO pops everything that happened to a key since its last pop.
func ExampleDeltaFIFO() {
	q := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions{})
	_ = q.Add(pod("web", "1"))
	_ = q.Add(pod("db", "2"))
	_ = q.Update(pod("web", "3"))
	_ = q.Delete(pod("web", "4"))
	for range 2 {
		_, _ = q.Pop(func(obj any, initial bool) error {
			show(obj.(deltafifo.Deltas), initial)
			return nil
		})
	}
	// Output:
	// [Added web@1, Updated web@3, Deleted web@4] initial=false
	// [Added db@2] initial=false
}

// A relist that no longer lists an object the cache knows produces a
// tombstone: the delete happened while nobody was watching.
func ExampleDeltaFIFO_Replace() {
	known := store.New(store.Options{})
	_ = known.Add(pod("gone", "1"))
	q := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions{KnownObjects: known, EmitDeltaTypeReplaced: true})
	_ = q.Replace([]any{pod("web", "5")}, "5")
	for range 2 {
		_, _ = q.Pop(func(obj any, initial bool) error {
			show(obj.(deltafifo.Deltas), initial)
			return nil
		})
	}
	fmt.Println("synced:", q.HasSynced())
	// Output:
	// [Replaced web@5] initial=true
	// [Deleted tombstone(shop/gone)] initial=true
	// synced: true
}

// RealFIFO keeps every event; PopBatch hands over runs of distinct keys, and
// a relist in atomic mode is one ReplacedAll delta, processed alone.
func ExampleRealFIFO_PopBatch() {
	q := deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions{AtomicEvents: true})
	_ = q.Add(pod("web", "1"))
	_ = q.Add(pod("db", "2"))
	_ = q.Update(pod("web", "3"))
	_ = q.Replace([]any{pod("web", "3"), pod("db", "2")}, "9")
	for range 3 {
		_ = q.PopBatch(
			func(batch []deltafifo.Delta, initial bool) error {
				fmt.Print("batch: ")
				show(batch, initial)
				return nil
			},
			func(obj any, initial bool) error {
				fmt.Print("single: ")
				show(obj.(deltafifo.Deltas), initial)
				return nil
			})
	}
	// Output:
	// batch: [Added web@1, Added db@2] initial=false
	// single: [Updated web@3] initial=false
	// single: [ReplacedAll rv=9 (2 objects)] initial=false
}
