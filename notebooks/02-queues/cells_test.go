package queues_test

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/fifo"
	"github.com/cachelab/cachelab/store"
)

// pod is an object named name at resourceVersion rv.
func pod(name, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, ResourceVersion: rv}}
}

// describe prints a popped item: an object, or deltas as "Type name@rv".
func describe(item any) string {
	switch t := item.(type) {
	case metav1.Object:
		return t.GetName() + "@" + t.GetResourceVersion()
	case deltafifo.Deltas:
		parts := make([]string, len(t))
		for i, d := range t {
			parts[i] = string(d.Type) + " " + describe(d.Object)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case deltafifo.DeletedFinalStateUnknown:
		return "tombstone(" + t.Key + ")"
	case deltafifo.ReplacedAllInfo:
		names := make([]string, len(t.Objects))
		for i, o := range t.Objects {
			names[i] = describe(o)
		}
		return "{rv " + t.ResourceVersion + ": " + strings.Join(names, " ") + "}"
	}
	return fmt.Sprintf("%v", item)
}

// events is the same story told to each queue: web is created, db is
// created, web changes, web is deleted.
func events(add, update, del func(obj any) error) {
	_ = add(pod("web", "1"))
	_ = add(pod("db", "2"))
	_ = update(pod("web", "3"))
	_ = del(pod("web", "4"))
}

// The plain FIFO keeps only the newest object per key: a consumer learns
// that web exists at rv 3, but not that it was created, nor (as Delete
// only marks it) that it is gone.
func ExampleFIFO() {
	q := fifo.New(fifo.Options{})
	events(q.Add, q.Update, q.Delete)
	for q.Len() > 0 {
		item, _ := q.Pop(func(any, bool) error { return nil })
		fmt.Println("pop", describe(item))
	}
	// Output:
	// pop db@2
}

// DeltaFIFO keeps every change to a key, grouped under the key: one pop
// gives everything that happened to web since it was last popped, in
// order, and keys come out in the order they were first queued.
func ExampleDeltaFIFO() {
	q := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions{})
	events(q.Add, q.Update, q.Delete)
	for q.Len() > 0 {
		item, _ := q.Pop(func(any, bool) error { return nil })
		fmt.Println("pop", describe(item))
	}
	// Output:
	// pop [Added web@1, Updated web@3, Deleted web@4]
	// pop [Added db@2]
}

// RealFIFO keeps every change as its own entry, in the order it happened,
// across keys: the consumer sees the world's history as the server told it.
func ExampleRealFIFO() {
	q := deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions{AtomicEvents: true})
	events(q.Add, q.Update, q.Delete)
	for q.Len() > 0 {
		item, _ := q.Pop(func(any, bool) error { return nil })
		fmt.Println("pop", describe(item))
	}
	// Output:
	// pop [Added web@1]
	// pop [Added db@2]
	// pop [Updated web@3]
	// pop [Deleted web@4]
}

// A relist hands the queue the whole list. DeltaFIFO queues each listed
// object as Replaced, and a tombstone for each object its consumer knows
// that the list no longer has. RealFIFO (atomic) queues the relist as one
// ReplacedAll delta; the consumer works out the deletes itself.
func ExampleDeltaFIFO_Replace() {
	known := store.New(store.Options{})
	_ = known.Add(pod("web", "1"))
	_ = known.Add(pod("gone", "2"))

	d := deltafifo.NewDeltaFIFO(deltafifo.DeltaFIFOOptions{KnownObjects: known, EmitDeltaTypeReplaced: true})
	_ = d.Replace([]any{pod("web", "5")}, "5")
	for d.Len() > 0 {
		item, _ := d.Pop(func(any, bool) error { return nil })
		fmt.Println("DeltaFIFO pop", describe(item))
	}

	r := deltafifo.NewRealFIFO(deltafifo.RealFIFOOptions{AtomicEvents: true})
	_ = r.Replace([]any{pod("web", "5")}, "5")
	item, _ := r.Pop(func(any, bool) error { return nil })
	fmt.Println("RealFIFO pop", describe(item))
	// Output:
	// DeltaFIFO pop [Replaced web@5]
	// DeltaFIFO pop [Deleted tombstone(shop/gone)]
	// RealFIFO pop [ReplacedAll {rv 5: web@5}]
}
