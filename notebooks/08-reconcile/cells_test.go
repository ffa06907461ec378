package reconcile_test

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/cache"
	cgworkqueue "k8s.io/client-go/util/workqueue"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/store"
	"github.com/cachelab/cachelab/workqueue"
)

// The handler's key function on the three things a handler can be given:
// an object, a cluster-scoped object, and a tombstone for a delete the
// informer only noticed on a relist (whose object may be stale: the key
// is all the handler takes from it). client-go's key function is given
// the same (its own tombstone type) and says the same.
func Example_keys() {
	web, node := object("web", "2"), &unstructured.Unstructured{}
	node.SetName("node-1")
	tombstone := store.DeletedFinalStateUnknown{Key: "shop/db", Obj: object("db", "4")}
	for _, obj := range []any{web, node, tombstone} {
		key, _ := store.DeletionHandlingMetaNamespaceKeyFunc(obj)
		cgObj := obj
		if t, ok := obj.(store.DeletedFinalStateUnknown); ok {
			cgObj = cache.DeletedFinalStateUnknown{Key: t.Key, Obj: t.Obj}
		}
		cgKey, _ := cache.DeletionHandlingMetaNamespaceKeyFunc(cgObj)
		fmt.Printf("%-32T key %-11s client-go's key %q\n", obj, fmt.Sprintf("%q", key), cgKey)
	}
	_, err := store.DeletionHandlingMetaNamespaceKeyFunc("not an object")
	_, cgErr := cache.DeletionHandlingMetaNamespaceKeyFunc("not an object")
	fmt.Printf("%-32s an error: %t  client-go's: an error: %t\n", "string", err != nil, cgErr != nil)
	// Output:
	// *v1.PartialObjectMetadata        key "shop/web"  client-go's key "shop/web"
	// *unstructured.Unstructured       key "node-1"    client-go's key "node-1"
	// store.DeletedFinalStateUnknown   key "shop/db"   client-go's key "shop/db"
	// string                           an error: true  client-go's: an error: true
}

// queue is what the next cell uses of a work queue; cachelab's
// workqueue.Queue and client-go's workqueue.Typed both have it.
type queue interface {
	Add(key string)
	Get() (key string, shutdown bool)
	Done(key string)
	Len() int
}

// The dirty and processing sets: one story told to cachelab's queue and
// to client-go's, step by step. Two workers take turns; web changes while
// the first holds it.
func Example_dirtyAndProcessing() {
	story := []struct{ op, key, why string }{
		{"Add", "web", ""},
		{"Add", "db", ""},
		{"Add", "web", "queued already: the two adds are one"},
		{"Get", "", "worker 1 holds web"},
		{"Add", "web", "web is held: dirty, not queued"},
		{"Get", "", "worker 2 gets db; web is not handed out"},
		{"Done", "web", "web was added while held: queued again"},
		{"Get", "", "worker 1 again"},
		{"Done", "db", ""},
		{"Done", "web", ""},
	}
	cl, cg := workqueue.New[string](), cgworkqueue.NewTyped[string]()
	same := true
	for _, s := range story {
		step := fmt.Sprintf("%s(%s)", s.op, s.key)
		for i, q := range []queue{cl, cg} {
			got := ""
			switch s.op {
			case "Add":
				q.Add(s.key)
			case "Done":
				q.Done(s.key)
			case "Get":
				key, _ := q.Get()
				got = "Get() -> " + key
			}
			if i == 0 {
				if got != "" {
					step = got
				}
				fmt.Println(strings.TrimSpace(fmt.Sprintf("%-12s Len %d  %s", step, q.Len(), s.why)))
			} else if got != "" && got != step || q.Len() != cl.Len() {
				same = false
			}
		}
	}
	fmt.Println("client-go's queue did the same at every step:", same)
	// Output:
	// Add(web)     Len 1
	// Add(db)      Len 2
	// Add(web)     Len 2  queued already: the two adds are one
	// Get() -> web Len 1  worker 1 holds web
	// Add(web)     Len 1  web is held: dirty, not queued
	// Get() -> db  Len 0  worker 2 gets db; web is not handed out
	// Done(web)    Len 1  web was added while held: queued again
	// Get() -> web Len 0  worker 1 again
	// Done(db)     Len 0
	// Done(web)    Len 0
	// client-go's queue did the same at every step: true
}

// Forgetting Forget: one key whose reconciles fail and succeed in turn,
// ten times. With Forget after each success, every failure waits 5ms.
// Without it, the limiter never hears of the successes, and the delays
// grow as if the key had failed every time, to 16m40s. client-go's
// limiter, given the same calls, returns the same.
func Example_forgetForgotten() {
	const key = "shop/web"
	for _, forgets := range []bool{true, false} {
		cl := workqueue.NewItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)
		cg := cgworkqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)
		var waits []time.Duration
		same := true
		for turn := range 40 {
			if turn%2 == 1 { // a success
				if forgets {
					cl.Forget(key)
					cg.Forget(key)
				}
				continue
			}
			d := cl.When(key) // a failure: AddRateLimited asks When
			same = same && d == cg.When(key)
			waits = append(waits, d)
		}
		fmt.Printf("Forget on success %-5t: the failures wait %v ... %v, NumRequeues %d; client-go the same: %t\n",
			forgets, waits[:5], waits[len(waits)-1], cl.NumRequeues(key), same)
	}
	// Output:
	// Forget on success true : the failures wait [5ms 5ms 5ms 5ms 5ms] ... 5ms, NumRequeues 0; client-go the same: true
	// Forget on success false: the failures wait [5ms 10ms 20ms 40ms 80ms] ... 16m40s, NumRequeues 20; client-go the same: true
}

// resourceVersions compared, by cachelab's controller and by
// apimachinery's util/resourceversion (K6): decimal integers of any
// length; "", "0" and leading zeros cannot be compared.
func Example_compareResourceVersions() {
	for _, p := range [][2]string{
		{"9", "10"}, {"10", "10"}, {"11", "10"},
		{"123456789012345678901234567890", "99"},
		{"", "10"}, {"0", "10"}, {"010", "10"}, {"10", "1e3"},
	} {
		n, err := controller.CompareResourceVersions(p[0], p[1])
		cgN, cgErr := resourceversion.CompareResourceVersion(p[0], p[1])
		got := fmt.Sprint(n)
		if err != nil {
			got = "cannot compare"
		}
		fmt.Printf("%-32q %-6q %-15s same in apimachinery: %t\n", p[0], p[1], got, n == cgN && (err == nil) == (cgErr == nil))
	}
	// Output:
	// "9"                              "10"   -1              same in apimachinery: true
	// "10"                             "10"   0               same in apimachinery: true
	// "11"                             "10"   1               same in apimachinery: true
	// "123456789012345678901234567890" "99"   1               same in apimachinery: true
	// ""                               "10"   cannot compare  same in apimachinery: true
	// "0"                              "10"   cannot compare  same in apimachinery: true
	// "010"                            "10"   cannot compare  same in apimachinery: true
	// "10"                             "1e3"  cannot compare  same in apimachinery: true
}
