package apistorage_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type world struct {
	etcd  *listwatch.Embedded
	w     *listwatch.Writer
	clock *clocktesting.FakeClock
}

func newWorld(t testing.TB) *world {
	t.Helper()
	e, err := listwatch.StartEmbedded(context.Background(), listwatch.EmbeddedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	n := 0
	w := listwatch.NewWriter(e.Client(), listwatch.Pods, listwatch.WriterOptions{
		NewUID: func() types.UID { n++; return types.UID(fmt.Sprintf("uid-%d", n)) },
		Now:    func() time.Time { return epoch },
	})
	return &world{etcd: e, w: w, clock: clocktesting.NewFakeClock(epoch)}
}

func (wd *world) server(t testing.TB, cache bool) *apistorage.Server {
	t.Helper()
	s, err := apistorage.New(testdeadline.Context(t), wd.etcd.Client(), listwatch.Pods, apistorage.Options{Cache: cache, Clock: wd.clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func pod(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func (wd *world) create(t testing.TB, ns, name string) {
	t.Helper()
	if _, err := wd.w.Create(context.Background(), pod(ns, name)); err != nil {
		t.Fatal(err)
	}
}

func list(t testing.TB, lw *apistorage.ListerWatcher, rv string) (string, int, string) {
	t.Helper()
	ctx, src := apistorage.WithSource(context.Background())
	obj, err := lw.ListWithContext(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		t.Fatalf("LIST rv=%q: %v", rv, err)
	}
	l := obj.(*unstructured.UnstructuredList)
	return l.GetResourceVersion(), len(l.Items), src.String()
}

func TestCacheServesOlderListAtRV0(t *testing.T) {
	wd := newWorld(t)
	wd.create(t, "ns0", "a")
	wd.create(t, "ns0", "b")
	s := wd.server(t, true)
	lw := s.ListerWatcher("")
	waitFor(t, func() bool { return s.CacheCaughtUp(3) })
	s.HoldCache()
	wd.create(t, "ns0", "c")
	if rv, n, src := list(t, lw, "0"); rv != "3" || n != 2 || src != "cache" {
		t.Errorf("LIST rv=0 with the cache held: rv %s, %d items, from %s; want rv 3, 2 items, from cache", rv, n, src)
	}
	s.ReleaseCache()
	waitFor(t, func() bool { return s.CacheCaughtUp(4) })
	if rv, n, src := list(t, lw, ""); rv != "4" || n != 3 || src != "cache" {
		t.Errorf("LIST rv=\"\": rv %s, %d items, from %s; want rv 4, 3 items, from cache", rv, n, src)
	}
	if rv, n, src := list(t, s.ListerWatcher("ns0"), "0"); rv != "4" || n != 3 || src != "cache" {
		t.Errorf("LIST ns0 rv=0: rv %s, %d items, from %s", rv, n, src)
	}
	tr := true
	w, err := lw.WatchWithContext(context.Background(), metav1.ListOptions{SendInitialEvents: &tr, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var got []string
	for e := range w.ResultChan() {
		u := e.Object.(*unstructured.Unstructured)
		got = append(got, fmt.Sprintf("%s %s@%s", e.Type, u.GetName(), u.GetResourceVersion()))
		if e.Type == watch.Bookmark {
			break
		}
	}
	t.Log(got)
	waitFor(t, s.Quiescent)
}

// waitFor waits until cond holds. Only the test binary's deadline bounds
// the wait (package testdeadline): how long it takes grows with the
// machine's load.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	ctx := testdeadline.Context(t)
	for !cond() {
		if ctx.Err() != nil {
			t.Fatal("condition not met by the test binary's deadline")
		}
		time.Sleep(time.Millisecond)
	}
}

// Without the cache every LIST is read from etcd, at etcd's revision.
func TestWithoutCacheListsFromEtcd(t *testing.T) {
	wd := newWorld(t)
	wd.create(t, "ns0", "a")
	s := wd.server(t, false)
	wd.create(t, "ns1", "b")
	if rv, n, src := list(t, s.ListerWatcher(""), "0"); rv != "3" || n != 2 || src != "etcd" {
		t.Errorf("LIST rv=0: rv %s, %d items, from %s; want rv 3, 2 items, from etcd", rv, n, src)
	}
	if rv, n, _ := list(t, s.ListerWatcher("ns1"), ""); rv != "3" || n != 1 {
		t.Errorf("LIST ns1: rv %s, %d items; want rv 3, 1 item", rv, n)
	}
}
