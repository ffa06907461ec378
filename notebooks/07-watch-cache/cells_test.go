package watchcache_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/listwatch"
)

// Which LISTs the watch cache answers, and which the cache delegator
// passes on to etcd.
func Example_whoAnswers() {
	ctx := context.Background()
	s := newServer(ctx)
	defer s.Close()
	for _, name := range []string{"a", "b", "c"} {
		s.create(ctx, "shop/"+name) // resourceVersions 2, 3, 4
	}
	caughtUp(ctx, s, s.api, false)

	page1, _ := s.api.ListerWatcher("").ListWithContext(ctx, metav1.ListOptions{Limit: 2})
	token := page1.(*unstructured.UnstructuredList).GetContinue()
	for _, opts := range []metav1.ListOptions{
		{ResourceVersion: "0"},
		{ResourceVersion: "0", Limit: 2},
		{},
		{Limit: 2},
		{Limit: 2, Continue: token},
		{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan},
		{ResourceVersion: "3", ResourceVersionMatch: metav1.ResourceVersionMatchExact},
		{ResourceVersion: "3", Limit: 1},
	} {
		fmt.Printf("LIST %-40s -> %s\n", request(opts), list(ctx, s, s.api, opts))
	}

	_ = s.api.RestartCache() // a kube-apiserver restart: a new cache lists etcd at 4
	caughtUp(ctx, s, s.api, false)
	s.create(ctx, "shop/d") // 5
	caughtUp(ctx, s, s.api, false)
	fmt.Println("kube-apiserver restarted; created shop/d")
	for _, rv := range []string{"3", "4"} {
		opts := metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
		fmt.Printf("LIST %-40s -> %s\n", request(opts), list(ctx, s, s.api, opts))
	}
	// Output:
	// LIST rv="0"                                   -> cache: rv 4, 3 items
	// LIST rv="0" limit=2                           -> cache: rv 4, 3 items
	// LIST rv=""                                    -> cache: rv 4, 3 items
	// LIST rv="" limit=2                            -> cache: rv 4, 2 items
	// LIST rv="" limit=2 continue=<page 1's token>  -> cache: rv 4, 1 item
	// LIST rv="3" match=NotOlderThan                -> cache: rv 4, 3 items
	// LIST rv="3" match=Exact                       -> cache: rv 3, 2 items
	// LIST rv="3" limit=1                           -> cache: rv 3, 1 item
	// kube-apiserver restarted; created shop/d
	// LIST rv="3" match=Exact                       -> etcd: rv 3, 2 items
	// LIST rv="4" match=Exact                       -> cache: rv 4, 3 items
}

// A relist that goes back in time (kubernetes issue 59848): two
// kube-apiservers, one of whose caches lags.
func Example_backInTime() {
	ctx := context.Background()
	s := newServer(ctx)
	defer s.Close()
	second := apiserver(ctx, s) // a second kube-apiserver over the same etcd
	defer second.Close()
	s.create(ctx, "shop/a") // 2
	s.create(ctx, "shop/b") // 3
	caughtUp(ctx, s, s.api, false)
	caughtUp(ctx, s, second, false)

	second.HoldCache() // busy: its cache takes in nothing for a moment
	s.delete(ctx, "shop/a")
	caughtUp(ctx, s, s.api, false)
	caughtUp(ctx, s, second, true)
	fmt.Println("deleted shop/a at rv 4")

	seen, _ := s.api.ListerWatcher("").ListWithContext(ctx, metav1.ListOptions{})
	fmt.Println("kube-apiserver 1, LIST rv=\"\": ", names(seen), "at rv", seen.(*unstructured.UnstructuredList).GetResourceVersion())
	back, _ := second.ListerWatcher("").ListWithContext(ctx, metav1.ListOptions{ResourceVersion: "0"})
	fmt.Println("kube-apiserver 2, LIST rv=\"0\":", names(back), "at rv", back.(*unstructured.UnstructuredList).GetResourceVersion())
	fmt.Println("kube-apiserver 2, LIST rv=\"4\":", list(ctx, s, second, metav1.ListOptions{ResourceVersion: "4"}))
	fmt.Println("kube-apiserver 2, LIST rv=\"\": ", list(ctx, s, second, metav1.ListOptions{}))
	// Output:
	// deleted shop/a at rv 4
	// kube-apiserver 1, LIST rv="":  [shop/b] at rv 4
	// kube-apiserver 2, LIST rv="0": [shop/a shop/b] at rv 3
	// kube-apiserver 2, LIST rv="4": cache: 504 Timeout: Timeout: Too large resource version: 4, current: 3 (after 3s of the server's clock)
	// kube-apiserver 2, LIST rv="":  etcd: rv 4, 1 item (after 3s of the server's clock)
}

// The cache sends a watch its own bookmarks, on its clock; etcd's
// progress notifications stop at the cache.
func Example_bookmarks() {
	ctx := context.Background()
	s := newServer(ctx)
	defer s.Close()
	s.create(ctx, "ns0/a") // 2
	caughtUp(ctx, s, s.api, false)
	w, _ := s.watch(ctx, s.api, metav1.ListOptions{ResourceVersion: "2", AllowWatchBookmarks: true})
	defer w.Stop()
	start := s.clock.Now()

	_ = s.api.RequestProgress(ctx) // etcd tells the cacher it is at 2
	fmt.Println("asked etcd for progress; events until 1m1s:", s.ticksUntil(w, start, 61*time.Second))
	s.create(ctx, "ns1/b") // 3
	caughtUp(ctx, s, s.api, false)
	fmt.Println("created ns1/b:", next(w))
	fmt.Println("events until 2m5s:", s.ticksUntil(w, start, 125*time.Second))
	// Output:
	// asked etcd for progress; events until 1m1s: []
	// created ns1/b: ADDED ns1/b@3
	// events until 2m5s: [2m0s: BOOKMARK @3]
}

// A watch the cache's history no longer covers gets 410, though etcd
// has compacted nothing.
func Example_historyWindow() {
	ctx := context.Background()
	s := newServer(ctx)
	defer s.Close()
	s.create(ctx, "ns0/a") // 2
	for i := range 100 {
		s.create(ctx, fmt.Sprintf("ns1/obj-%04d", i+1)) // 3 to 102
	}
	caughtUp(ctx, s, s.api, false)
	s.clock.Step(80 * time.Second)
	for i := range 110 {
		s.create(ctx, fmt.Sprintf("ns2/obj-%04d", i+1)) // 103 to 212
	}
	caughtUp(ctx, s, s.api, false)

	for _, rv := range []string{"2", "12"} {
		w, _ := s.watch(ctx, s.api, metav1.ListOptions{ResourceVersion: rv})
		fmt.Printf("cache, WATCH rv=%s: %s\n", rv, next(w))
		w.Stop()
	}
	fmt.Println("cache, LIST rv=\"2\" match=Exact:", list(ctx, s, s.api, metav1.ListOptions{
		ResourceVersion: "2", ResourceVersionMatch: metav1.ResourceVersionMatchExact}))
	direct := listwatch.NewListerWatcher(s.etcd.Client(), listwatch.Pods, listwatch.Options{})
	w, _ := direct.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "2"})
	fmt.Println("etcd,  WATCH rv=2:", next(w))
	w.Stop()
	// Output:
	// cache, WATCH rv=2: ERROR 410 Expired: too old resource version: 2 (12)
	// cache, WATCH rv=12: ADDED ns1/obj-0011@13
	// cache, LIST rv="2" match=Exact: etcd: rv 2, 1 item
	// etcd,  WATCH rv=2: ADDED ns1/obj-0001@3
}

// A restarted kube-apiserver's cache is not ready until it has listed
// etcd: 429, except for a LIST that etcd can answer.
func Example_notReady() {
	ctx := context.Background()
	s := newServer(ctx)
	defer s.Close()
	s.create(ctx, "shop/a") // 2
	caughtUp(ctx, s, s.api, false)
	s.api.HoldCache() // the new cache's list of etcd waits until ReleaseCache
	_ = s.api.RestartCache()
	caughtUp(ctx, s, s.api, true)
	s.create(ctx, "shop/b") // 3: etcd has it, the cache does not
	fmt.Println("restarted, created shop/b; ready:", s.api.Ready())

	_, err := s.api.ListerWatcher("").WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "2"})
	fmt.Println("WATCH rv=2:            ", status(err))
	for _, opts := range []metav1.ListOptions{{ResourceVersion: "0"}, {ResourceVersion: "0", Limit: 500}} {
		fmt.Printf("LIST %-18s -> %s\n", request(opts), list(ctx, s, s.api, opts))
	}
	s.api.ReleaseCache()
	caughtUp(ctx, s, s.api, false)
	fmt.Println("released; ready:", s.api.Ready())
	fmt.Printf("LIST %-18s -> %s\n", `rv="0" limit=500`, list(ctx, s, s.api, metav1.ListOptions{ResourceVersion: "0", Limit: 500}))
	// Output:
	// restarted, created shop/b; ready: false
	// WATCH rv=2:             429 TooManyRequests: storage is (re)initializing
	// LIST rv="0"             -> cache: 429 TooManyRequests: storage is (re)initializing
	// LIST rv="0" limit=500   -> etcd: rv 3, 2 items
	// released; ready: true
	// LIST rv="0" limit=500   -> cache: rv 3, 2 items
}

// A consistent read waits for the cache to reach etcd's revision: a LIST
// then falls back to etcd, a watch-list ends with 504.
func Example_consistentRead() {
	ctx := context.Background()
	s := newServer(ctx)
	defer s.Close()
	s.create(ctx, "shop/a") // 2
	caughtUp(ctx, s, s.api, false)
	s.api.HoldCache()
	s.create(ctx, "shop/b") // 3
	caughtUp(ctx, s, s.api, true)

	fmt.Println(`LIST rv="":`, list(ctx, s, s.api, metav1.ListOptions{}))
	start := s.clock.Now()
	w, _ := s.watch(ctx, s.api, metav1.ListOptions{
		SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	fmt.Printf("watch-list rv=\"\" (opened after %v): %s\n", s.clock.Since(start), next(w))
	w.Stop()

	s.api.ReleaseCache()
	caughtUp(ctx, s, s.api, false)
	fmt.Println(`released; LIST rv="":`, list(ctx, s, s.api, metav1.ListOptions{}))
	// Output:
	// LIST rv="": etcd: rv 3, 2 items (after 3s of the server's clock)
	// watch-list rv="" (opened after 3s): ERROR 504 Timeout: Timeout: Too large resource version: 3, current: 2
	// released; LIST rv="": cache: rv 3, 2 items
}
