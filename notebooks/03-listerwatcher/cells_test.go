package listerwatcher_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/listwatch"
)

// pod is a Pod as a client sends it to be created: kind, namespace, name
// and labels. The server adds uid, creationTimestamp and resourceVersion.
func pod(ns, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	return u
}

// items renders a list's items as "namespace/name@resourceVersion".
func items(list runtime.Object) []string {
	var out []string
	_ = meta.EachListItem(list, func(obj runtime.Object) error {
		m, _ := meta.Accessor(obj)
		out = append(out, m.GetNamespace()+"/"+m.GetName()+"@"+m.GetResourceVersion())
		return nil
	})
	return out
}

// next reads a watch's next event and renders it. The 10 s limit only
// guards against a hang: a cell that is right never waits that long.
func next(w watch.Interface) string {
	select {
	case e, open := <-w.ResultChan():
		if !open {
			return "(the watch is closed)"
		}
		return event(e)
	case <-time.After(10 * time.Second):
		return "(no event within 10s)"
	}
}

// event renders a watch event: "ADDED shop/web-1@2", "BOOKMARK @4",
// "ERROR 410 Expired: ...". A bookmark carries no name, only a
// resourceVersion (and maybe the initial-events-end annotation).
func event(e watch.Event) string {
	switch o := e.Object.(type) {
	case *metav1.Status:
		return fmt.Sprintf("%s %d %s: %s", e.Type, o.Code, o.Reason, o.Message)
	case *unstructured.Unstructured:
		if e.Type == watch.Bookmark {
			s := "BOOKMARK @" + o.GetResourceVersion()
			if o.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
				s += " " + metav1.InitialEventsAnnotationKey
			}
			return s
		}
		return fmt.Sprintf("%s %s/%s@%s", e.Type, o.GetNamespace(), o.GetName(), o.GetResourceVersion())
	}
	return fmt.Sprintf("%s %T", e.Type, e.Object)
}

// status renders an API error as "410 Expired: message" (its first
// sentence: some of kube-apiserver's messages go on for a paragraph).
func status(err error) string {
	var s apierrors.APIStatus
	if !errors.As(err, &s) {
		return fmt.Sprintf("not an API error: %v", err)
	}
	st := s.Status()
	msg, _, _ := strings.Cut(st.Message, ". ")
	return fmt.Sprintf("%d %s: %s", st.Code, st.Reason, strings.TrimSuffix(msg, ".")+".")
}

// bookmark asks etcd for a progress report until w's next event arrives,
// and returns it. etcd answers a request only while every watch on the
// client's stream has caught up, so one request can go unanswered: ask
// again every 50 ms (a retry, not a wait for something to settle).
func bookmark(ctx context.Context, lw *listwatch.ListerWatcher, w watch.Interface) string {
	deadline := time.After(10 * time.Second)
	for {
		if err := lw.RequestProgress(ctx); err != nil {
			return err.Error()
		}
		select {
		case e := <-w.ResultChan():
			return event(e)
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			return "(no bookmark within 10s)"
		}
	}
}

// newEtcd starts an etcd inside the test process (a temporary directory,
// loopback ports the kernel picks) and returns it with a Writer and a
// ListerWatcher for pods, the two sides of kube-apiserver's storage.
func newEtcd(ctx context.Context) (*listwatch.Embedded, *listwatch.Writer, *listwatch.ListerWatcher) {
	e, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	pods := listwatch.NewWriter(e.Client(), listwatch.Pods, listwatch.WriterOptions{})
	lw := listwatch.NewListerWatcher(e.Client(), listwatch.Pods, listwatch.Options{})
	return e, pods, lw
}

// An object lives in etcd under /registry/<resource>/<namespace>/<name>,
// stored without a resourceVersion: its resourceVersion is the etcd
// revision that last wrote it (E1). A LIST reads every item at one
// revision, and the list's resourceVersion is that revision, not its
// newest item's (E3); with ResourceVersionMatch Exact it reads the past.
func ExampleListerWatcher_ListWithContext() {
	ctx := context.Background()
	e, pods, lw := newEtcd(ctx)
	defer e.Close()

	for _, name := range []string{"web-1", "web-2", "db-1"} {
		created, _ := pods.Create(ctx, pod("shop", name, nil))
		fmt.Printf("created shop/%s at resourceVersion %s\n", name, created.GetResourceVersion())
	}
	_, _ = pods.Delete(ctx, "shop", "db-1", listwatch.Preconditions{})
	rev, _ := e.Revision(ctx)
	fmt.Println("deleted shop/db-1; etcd's revision is now", rev)

	kv, _ := e.Client().Get(ctx, "/registry/pods/shop/web-1")
	stored := string(kv.Kvs[0].Value)
	fmt.Printf("etcd key %s: mod revision %d, value holds a resourceVersion: %t\n",
		kv.Kvs[0].Key, kv.Kvs[0].ModRevision, strings.Contains(stored, "resourceVersion"))

	latest, _ := lw.ListWithContext(ctx, metav1.ListOptions{})
	fmt.Println("LIST:", items(latest), "list resourceVersion", latest.(metav1.ListInterface).GetResourceVersion())
	past, _ := lw.ListWithContext(ctx, metav1.ListOptions{
		ResourceVersion: "4", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	fmt.Println("LIST at exactly 4:", items(past), "list resourceVersion", past.(metav1.ListInterface).GetResourceVersion())
	// Output:
	// created shop/web-1 at resourceVersion 2
	// created shop/web-2 at resourceVersion 3
	// created shop/db-1 at resourceVersion 4
	// deleted shop/db-1; etcd's revision is now 5
	// etcd key /registry/pods/shop/web-1: mod revision 2, value holds a resourceVersion: false
	// LIST: [shop/web-1@2 shop/web-2@3] list resourceVersion 5
	// LIST at exactly 4: [shop/db-1@4 shop/web-1@2 shop/web-2@3] list resourceVersion 4
}

// A LIST with a limit returns one page and a continue token; the token
// carries the first page's revision and the key to go on from, so every
// page is read at that revision and a write between pages is not seen
// (E4).
func ExampleListerWatcher_ListWithContext_pages() {
	ctx := context.Background()
	e, pods, lw := newEtcd(ctx)
	defer e.Close()
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		_, _ = pods.Create(ctx, pod("shop", name, nil)) // resourceVersions 2 to 6
	}

	opts := metav1.ListOptions{Limit: 2}
	for page := 1; ; page++ {
		obj, err := lw.ListWithContext(ctx, opts)
		if err != nil {
			fmt.Println(err)
			return
		}
		list := obj.(*unstructured.UnstructuredList)
		fmt.Printf("page %d: %v resourceVersion %s", page, items(list), list.GetResourceVersion())
		if n := list.GetRemainingItemCount(); n != nil {
			fmt.Printf(", %d more", *n)
		}
		fmt.Println()
		if page == 1 {
			token, _ := base64.RawURLEncoding.DecodeString(list.GetContinue())
			fmt.Printf("  its continue token, decoded: %s\n", token)
			_, _ = pods.Create(ctx, pod("shop", "bb", nil)) // resourceVersion 7
			fmt.Println("  created shop/bb between the pages")
		}
		if list.GetContinue() == "" {
			break // the last page has no continue token
		}
		opts.Continue = list.GetContinue()
	}
	fresh, _ := lw.ListWithContext(ctx, metav1.ListOptions{})
	fmt.Println("a new LIST:", items(fresh))
	// Output:
	// page 1: [shop/a@2 shop/b@3] resourceVersion 6, 3 more
	//   its continue token, decoded: {"v":"meta.k8s.io/v1","rv":6,"start":"shop/b\u0000"}
	//   created shop/bb between the pages
	// page 2: [shop/c@4 shop/d@5] resourceVersion 6, 1 more
	// page 3: [shop/e@6] resourceVersion 6
	// a new LIST: [shop/a@2 shop/b@3 shop/bb@7 shop/c@4 shop/d@5 shop/e@6]
}

// A WATCH from resourceVersion r sends every change after r: it starts at
// etcd revision r+1. A delete carries the object's last state stamped
// with the delete's revision (E6). With a label selector, an update that
// makes an object match arrives as ADDED and one that makes it stop
// matching as DELETED (E5).
func ExampleListerWatcher_WatchWithContext() {
	ctx := context.Background()
	e, pods, lw := newEtcd(ctx)
	defer e.Close()
	web := map[string]string{"app": "web"}
	db := map[string]string{"app": "db"}
	front := map[string]string{"app": "web", "tier": "front"}
	_, _ = pods.Create(ctx, pod("shop", "web-1", web)) // 2
	_, _ = pods.Create(ctx, pod("shop", "db-1", db))   // 3

	all, _ := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "2"})
	defer all.Stop()
	webOnly, _ := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "3", LabelSelector: "app=web"})
	defer webOnly.Stop()

	_, _ = pods.Update(ctx, pod("shop", "web-1", front))                // 4
	_, _ = pods.Create(ctx, pod("shop", "web-2", web))                  // 5
	_, _ = pods.Update(ctx, pod("shop", "web-2", db))                   // 6: leaves app=web
	_, _ = pods.Update(ctx, pod("shop", "db-1", web))                   // 7: enters app=web
	_, _ = pods.Delete(ctx, "shop", "web-1", listwatch.Preconditions{}) // 8

	fmt.Println("all pods, from resourceVersion 2:")
	for range 6 {
		fmt.Println("  " + next(all))
	}
	fmt.Println("app=web, from resourceVersion 3:")
	for range 5 {
		fmt.Println("  " + next(webOnly))
	}
	// Output:
	// all pods, from resourceVersion 2:
	//   ADDED shop/db-1@3
	//   MODIFIED shop/web-1@4
	//   ADDED shop/web-2@5
	//   MODIFIED shop/web-2@6
	//   MODIFIED shop/db-1@7
	//   DELETED shop/web-1@8
	// app=web, from resourceVersion 3:
	//   MODIFIED shop/web-1@4
	//   ADDED shop/web-2@5
	//   DELETED shop/web-2@6
	//   ADDED shop/db-1@7
	//   DELETED shop/web-1@8
}

// etcd keeps old revisions until it is compacted. After that, whatever
// names a compacted revision gets 410 Expired: a LIST at it, the next page
// of a list that began there (E4), and a WATCH that would start there,
// which ends with an Error event (E7). A client that gets 410 must list
// again from the present.
func ExampleEmbedded_Compact() {
	ctx := context.Background()
	e, pods, lw := newEtcd(ctx)
	defer e.Close()
	for _, name := range []string{"a", "b", "c"} {
		_, _ = pods.Create(ctx, pod("shop", name, nil)) // 2, 3, 4
	}
	first, _ := lw.ListWithContext(ctx, metav1.ListOptions{Limit: 2})
	page1 := first.(*unstructured.UnstructuredList)
	fmt.Println("page 1:", items(page1), "resourceVersion", page1.GetResourceVersion())

	_, _ = pods.Create(ctx, pod("shop", "d", nil)) // 5
	rev, _ := e.Revision(ctx)
	_ = e.Compact(ctx, rev)
	fmt.Println("compacted etcd at revision", rev)

	_, err := lw.ListWithContext(ctx, metav1.ListOptions{Limit: 2, Continue: page1.GetContinue()})
	fmt.Println("page 2:", status(err))
	_, err = lw.ListWithContext(ctx, metav1.ListOptions{
		ResourceVersion: "4", ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	fmt.Println("LIST at exactly 4:", status(err))

	gone, _ := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "3"}) // would start at 4
	defer gone.Stop()
	fmt.Println("WATCH from 3:", next(gone), "then", next(gone))
	kept, _ := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "4"}) // starts at 5: kept
	defer kept.Stop()
	fmt.Println("WATCH from 4:", next(kept))
	// Output:
	// page 1: [shop/a@2 shop/b@3] resourceVersion 4
	// compacted etcd at revision 5
	// page 2: 410 Expired: The provided continue parameter is too old to display a consistent list result.
	// LIST at exactly 4: 410 Expired: The resourceVersion for the provided list is too old.
	// WATCH from 3: ERROR 410 Expired: The resourceVersion for the provided watch is too old. then (the watch is closed)
	// WATCH from 4: ADDED shop/d@5
}

// Watch-list (E9): SendInitialEvents with ResourceVersionMatch NotOlderThan
// turns a WATCH into a LIST and a WATCH on one stream: an ADDED event per
// existing object, each at its own resourceVersion, then a BOOKMARK at the
// snapshot's revision annotated k8s.io/initial-events-end, then live
// events. Bookmarks (E8) reach only watches that set AllowWatchBookmarks;
// here one comes when the test asks etcd for progress.
func ExampleListerWatcher_WatchWithContext_watchList() {
	ctx := context.Background()
	e, pods, lw := newEtcd(ctx)
	defer e.Close()
	relabel := map[string]string{"v": "2"}
	_, _ = pods.Create(ctx, pod("shop", "a", nil))     // 2
	_, _ = pods.Create(ctx, pod("shop", "b", nil))     // 3
	_, _ = pods.Update(ctx, pod("shop", "a", relabel)) // 4: a is newer than b

	stream, _ := lw.WatchWithContext(ctx, metav1.ListOptions{
		SendInitialEvents:    ptr.To(true),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks:  true,
	})
	defer stream.Stop()
	plain, _ := lw.WatchWithContext(ctx, metav1.ListOptions{ResourceVersion: "4"}) // no bookmarks
	defer plain.Stop()
	for range 3 {
		fmt.Println("watch-list:", next(stream))
	}

	_, _ = pods.Create(ctx, pod("shop", "c", nil)) // 5
	fmt.Println("watch-list:", next(stream))
	fmt.Println("plain:     ", next(plain))
	fmt.Println("asked etcd for progress")
	fmt.Println("watch-list:", bookmark(ctx, lw, stream))
	_, _ = pods.Create(ctx, pod("shop", "d", nil)) // 6
	fmt.Println("plain:     ", next(plain), "(no bookmark before it)")
	// Output:
	// watch-list: ADDED shop/a@4
	// watch-list: ADDED shop/b@3
	// watch-list: BOOKMARK @4 k8s.io/initial-events-end
	// watch-list: ADDED shop/c@5
	// plain:      ADDED shop/c@5
	// asked etcd for progress
	// watch-list: BOOKMARK @5
	// plain:      ADDED shop/d@6 (no bookmark before it)
}
