package store_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/store"
)

// A TTL cache on a fake clock: entries expire a minute after their last
// write, but only a read finds out and deletes them; ListKeys asks no
// one, so until then it still shows them.
func ExampleNewExpirationCache() {
	clock := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := store.NewExpirationCache(store.ExpirationOptions{Clock: clock, TTL: time.Minute})
	_ = c.Add(pod("shop", "web-1", "11", "web"))
	clock.Step(30 * time.Second)
	_ = c.Add(pod("shop", "web-2", "12", "web"))
	clock.Step(31 * time.Second) // web-1 is 61s old, web-2 31s

	fmt.Println("keys:", c.ListKeys())
	_, found, _ := c.GetByKey("shop/web-1")
	fmt.Println("web-1 found:", found)
	fmt.Println("keys:", c.ListKeys())
	// Output:
	// keys: [shop/web-1 shop/web-2]
	// web-1 found: false
	// keys: [shop/web-2]
}

// An undelta store turns changes back into complete states: after every
// write the consumer gets everything.
func ExampleNewUndeltaStore() {
	names := func(objs []any) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.(metav1.Object).GetName())
		}
		return out
	}
	u := store.NewUndeltaStore(func(all []any) { fmt.Println("now:", names(all)) }, store.MetaNamespaceKeyFunc)
	_ = u.Add(pod("shop", "web-1", "11", "web"))
	_ = u.Add(pod("shop", "db-1", "12", "db"))
	_ = u.Delete(pod("shop", "web-1", "13", "web"))
	// Output:
	// now: [web-1]
	// now: [db-1 web-1]
	// now: [db-1]
}
