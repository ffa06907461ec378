package consistencydetector

import (
	"fmt"
	"reflect"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/klog/v2"
)

// compare panics when the listed objects and the retrieved ones differ
// (V5): whole objects, not only their names and resourceVersions, each
// side sorted by UID first, so that order does not count.
//
// The sort is sort.Sort's, which is not stable: objects with equal UIDs
// (none set, as in a hand-made list) keep whatever order the algorithm
// leaves them in. client-go sorts the same way, so the same two inputs
// compare the same in both, equal-UID orders included.
func compare(logger klog.Logger, identity string, listed, retrieved []metav1.Object) {
	sort.Sort(byUID(listed))
	sort.Sort(byUID(retrieved))
	if reflect.DeepEqual(listed, retrieved) {
		return
	}
	logger.Info("Previously received data is different than received by the standard list api call against etcd", "diff", diff.Diff(listed, retrieved))
	panic(fmt.Sprintf("data inconsistency detected for %s, panicking!", identity))
}

// byUID orders objects by UID, for sort.Sort.
type byUID []metav1.Object

func (a byUID) Len() int           { return len(a) }
func (a byUID) Less(i, j int) bool { return a[i].GetUID() < a[j].GetUID() }
func (a byUID) Swap(i, j int)      { a[i], a[j] = a[j], a[i] }
