package listwatch_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

// The ListerWatcher satisfies client-go's interfaces, including the
// optional watch-list opt-out.
var (
	_ cache.ListerWatcher                                 = (*listwatch.ListerWatcher)(nil)
	_ cache.ListerWatcherWithContext                      = (*listwatch.ListerWatcher)(nil)
	_ interface{ IsWatchListSemanticsUnSupported() bool } = (*listwatch.ListerWatcher)(nil)
)

// recorder collects an informer's notifications as "ADD ns/name@rv".
type recorder struct {
	mu  sync.Mutex
	got []string
	ch  chan string
}

func newRecorder() *recorder { return &recorder{ch: make(chan string, 10000)} }

func (r *recorder) note(kind string, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
		kind += "(tombstone)"
	}
	u := obj.(*unstructured.Unstructured)
	s := fmt.Sprintf("%s %s/%s@%s", kind, u.GetNamespace(), u.GetName(), u.GetResourceVersion())
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
	r.ch <- s
}

func (r *recorder) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { r.note("ADD", obj) },
		UpdateFunc: func(_, obj any) { r.note("UPDATE", obj) },
		DeleteFunc: func(obj any) { r.note("DELETE", obj) },
	}
}

// await waits for a notification equal to want, failing at the test
// binary's deadline (package testdeadline: a guard against hangs, not a
// timing assumption).
func (r *recorder) await(t testing.TB, want string) {
	t.Helper()
	deadline := testdeadline.Context(t)
	for {
		select {
		case s := <-r.ch:
			if s == want {
				return
			}
		case <-deadline.Done():
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("no %q by the test binary's deadline; got %v", want, r.got)
		}
	}
}

// etcdContent is "ns/name@rv" for every pod in etcd now.
func etcdContent(t testing.TB, wd *world) []string {
	l := wd.list(t, metav1.ListOptions{})
	out := make([]string, len(l.Items))
	for i, it := range l.Items {
		out[i] = fmt.Sprintf("%s/%s@%s", it.GetNamespace(), it.GetName(), it.GetResourceVersion())
	}
	return out
}

func storeContent(s cache.Store) []string {
	var out []string
	for _, obj := range s.List() {
		u := obj.(*unstructured.Unstructured)
		out = append(out, fmt.Sprintf("%s/%s@%s", u.GetNamespace(), u.GetName(), u.GetResourceVersion()))
	}
	sort.Strings(out)
	return out
}

// Real client-go v0.37.2 informers, with default gates (watch-list first)
// and with watch-list refused (LIST then WATCH), sync, follow live writes,
// survive a compaction that overtakes their watch (410, relist), and end
// with a cache equal to etcd's content. (E3-E9 as a whole)
func TestClientGoInformer(t *testing.T) {
	t.Parallel() // it waits on etcd, mostly (main_test.go)
	for _, noWatchList := range []bool{false, true} {
		t.Run(fmt.Sprintf("noWatchList=%v", noWatchList), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			wd := newWorld(t)
			for i := range 5 {
				wd.create(t, pod(fmt.Sprintf("a/p%d", i)))
			}
			lw := listwatch.NewListerWatcher(wd.etcd.Client(), listwatch.Pods, listwatch.Options{NoWatchList: noWatchList})
			informer := cache.NewSharedIndexInformerWithOptions(lw, &unstructured.Unstructured{}, cache.SharedIndexInformerOptions{})
			rec := newRecorder()
			if _, err := informer.AddEventHandler(rec.handler()); err != nil {
				t.Fatal(err)
			}
			stopped := make(chan struct{})
			go func() { defer close(stopped); informer.RunWithContext(ctx) }()
			if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
				t.Fatal("informer did not sync")
			}

			live := wd.create(t, pod("a/live"))
			rec.await(t, "ADD a/live@"+live.GetResourceVersion())
			live.SetLabels(map[string]string{"v": "2"})
			live = wd.update(t, live)
			rec.await(t, "UPDATE a/live@"+live.GetResourceVersion())
			if _, err := wd.w.Delete(ctx, "a", "p0", listwatch.Preconditions{}); err != nil {
				t.Fatal(err)
			}
			rec.await(t, fmt.Sprintf("DELETE a/p0@%d", wd.rev(t)))

			// Drop the watch and hold the re-watch until a compaction has
			// passed the informer's resourceVersion: the re-watch gets 410
			// and the informer relists, seeing the update it missed.
			lw.HoldWatches()
			lw.DropWatches()
			live.SetLabels(map[string]string{"v": "3"})
			live.SetResourceVersion("")
			live = wd.update(t, live)
			wd.create(t, pod("a/late"))
			if err := wd.etcd.Compact(ctx, wd.rev(t)); err != nil {
				t.Fatal(err)
			}
			lw.ReleaseWatches()
			rec.await(t, "UPDATE a/live@"+live.GetResourceVersion())

			if d := cmp.Diff(etcdContent(t, wd), storeContent(informer.GetStore())); d != "" {
				t.Errorf("informer cache differs from etcd (-etcd +cache):\n%s", d)
			}
			cancel()
			<-stopped
		})
	}
}

// client-go's Reflector with WatchListPageSize pages its LIST; bookmarks
// reach a store that takes them.
func TestClientGoReflectorPagedAndBookmarks(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wd := newWorld(t)
	for i := range 7 {
		wd.create(t, pod(fmt.Sprintf("a/p%d", i)))
	}
	lw := listwatch.NewListerWatcher(wd.etcd.Client(), listwatch.Pods, listwatch.Options{NoWatchList: true})
	store := &bookmarkStore{Store: cache.NewStore(cache.MetaNamespaceKeyFunc),
		marks: make(chan string, 1000), added: make(chan string, 1000)}
	r := cache.NewReflectorWithOptions(lw, &unstructured.Unstructured{}, store, cache.ReflectorOptions{})
	r.WatchListPageSize = 2
	stopped := make(chan struct{})
	go func() { defer close(stopped); r.RunWithContext(ctx) }()

	// a/late arrives by the paged LIST or by the watch; a/later, written
	// once a/late is stored, can only arrive by the watch. After it, the
	// watch has caught up, and etcd answers progress requests with
	// bookmarks at a/later's revision.
	wd.create(t, pod("a/late"))
	store.await(t, "a/late")
	later := wd.create(t, pod("a/later"))
	store.await(t, "a/later")
	requestProgressUntil(ctx, t, lw, func() {
		deadline := testdeadline.Context(t)
		for {
			select {
			case rv := <-store.marks:
				if rv == later.GetResourceVersion() {
					return
				}
			case <-deadline.Done():
				t.Fatalf("no bookmark at %s by the test binary's deadline", later.GetResourceVersion())
			}
		}
	})
	if got := len(store.List()); got != 9 {
		t.Errorf("store holds %d objects, want 9", got)
	}
	cancel()
	<-stopped
}

// bookmarkStore is a store that takes bookmarks (ReflectorBookmarkStore)
// and reports the keys it stores.
type bookmarkStore struct {
	cache.Store
	marks chan string
	added chan string
}

func (s *bookmarkStore) Bookmark(rv string) error {
	select {
	case s.marks <- rv:
	default: // nobody is counting any more
	}
	return nil
}

func (s *bookmarkStore) Add(obj any) error {
	err := s.Store.Add(obj)
	s.report(obj)
	return err
}

func (s *bookmarkStore) Replace(list []any, rv string) error {
	err := s.Store.Replace(list, rv)
	for _, obj := range list {
		s.report(obj)
	}
	return err
}

// report tells await about a stored key, never blocking the reflector.
func (s *bookmarkStore) report(obj any) {
	key, _ := cache.MetaNamespaceKeyFunc(obj)
	select {
	case s.added <- key:
	default:
	}
}

// await waits until key has been stored.
func (s *bookmarkStore) await(t testing.TB, key string) {
	t.Helper()
	deadline := testdeadline.Context(t)
	for {
		select {
		case k := <-s.added:
			if k == key {
				return
			}
		case <-deadline.Done():
			t.Fatalf("%s not stored by the test binary's deadline", key)
		}
	}
}
