package heap_test

import (
	"fmt"

	"github.com/cachelab/cachelab/heap"
)

// A task queue by priority: a task whose priority changes while it waits
// moves to its new place, and a task put back to retry does not undo a
// newer version of it.
func Example() {
	type task struct {
		name string
		prio int
	}
	key := func(obj any) (string, error) { return obj.(task).name, nil }
	urgentFirst := func(a, b any) bool { return a.(task).prio < b.(task).prio }

	h := heap.NewHeap(key, urgentFirst)
	_ = h.Add(task{"backup", 5})
	_ = h.Add(task{"deploy", 2})
	_ = h.Add(task{"alert", 3})
	_ = h.Update(task{"backup", 1})         // now the most urgent
	_ = h.AddIfNotPresent(task{"alert", 9}) // alert is queued: kept at 3
	h.Close()                               // no more adds; Pop drains

	for {
		obj, err := h.Pop()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(obj.(task).name, obj.(task).prio)
	}
	// Output:
	// backup 1
	// deploy 2
	// alert 3
	// heap is closed
}
