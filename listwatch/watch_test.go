package listwatch_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

func (wd *world) watch(t testing.TB, opts metav1.ListOptions) watch.Interface {
	t.Helper()
	w, err := wd.lw.WatchWithContext(context.Background(), opts)
	if err != nil {
		t.Fatalf("watch %+v: %v", opts, err)
	}
	t.Cleanup(w.Stop)
	return w
}

func events(t testing.TB, w watch.Interface, n int) []string {
	t.Helper()
	out := make([]string, n)
	for i := range out {
		out[i] = describe(next(t, w))
	}
	return out
}

func checkEvents(t testing.TB, got []string, want ...string) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

// Selectors filter lists and watches; in a watch an update that enters the
// selector is ADDED and one that leaves it is DELETED, carrying the old
// object at the update's revision. (E5)
func TestE5Selectors(t *testing.T) {
	wd := newWorld(t)
	x := wd.create(t, pod("a/x", "app", "web"))
	wd.create(t, pod("a/y", "app", "db"))
	wd.create(t, pod("b/x", "app", "web"))
	if got := names(wd.list(t, metav1.ListOptions{LabelSelector: "app=web"})); !cmp.Equal(got, []string{"a/x", "b/x"}) {
		t.Errorf("label selector: %v", got)
	}
	if got := names(wd.list(t, metav1.ListOptions{FieldSelector: "metadata.namespace=a,metadata.name=y"})); !cmp.Equal(got, []string{"a/y"}) {
		t.Errorf("field selector: %v", got)
	}
	for _, opts := range []metav1.ListOptions{{LabelSelector: "app in (web"}, {FieldSelector: "spec.nodeName=n1"}, {FieldSelector: "metadata.name"}} {
		if _, err := wd.lw.List(opts); !apierrors.IsBadRequest(err) {
			t.Errorf("list %+v: %v, want BadRequest", opts, err)
		}
		if _, err := wd.lw.Watch(opts); !apierrors.IsBadRequest(err) {
			t.Errorf("watch %+v: %v, want BadRequest", opts, err)
		}
	}
	w := wd.watch(t, metav1.ListOptions{ResourceVersion: strconv.FormatInt(wd.rev(t), 10), LabelSelector: "app=web"})
	x.SetLabels(map[string]string{"app": "db"})
	left := wd.update(t, x)
	x.SetLabels(map[string]string{"app": "web"})
	x.SetResourceVersion("")
	entered := wd.update(t, x)
	checkEvents(t, events(t, w, 2),
		"DELETED a/x@"+left.GetResourceVersion(),
		"ADDED a/x@"+entered.GetResourceVersion())
}

// A watch from RV r sees every change after r; a delete carries the last
// object at the delete's revision; from RV "" (legacy) it first sends every
// current object as ADDED. (E6)
func TestE6Watch(t *testing.T) {
	ctx := context.Background()
	wd := newWorld(t)
	x1 := wd.create(t, pod("a/x"))
	from := wd.rev(t)
	legacy := wd.watch(t, metav1.ListOptions{})
	w := wd.watch(t, metav1.ListOptions{ResourceVersion: strconv.FormatInt(from, 10)})
	y := wd.create(t, pod("a/y"))
	x1.SetLabels(map[string]string{"v": "2"})
	x2 := wd.update(t, x1)
	if _, err := wd.w.Delete(ctx, "a", "y", listwatch.Preconditions{}); err != nil {
		t.Fatal(err)
	}
	del := strconv.FormatInt(wd.rev(t), 10)
	checkEvents(t, events(t, w, 3),
		"ADDED a/y@"+y.GetResourceVersion(), "MODIFIED a/x@"+x2.GetResourceVersion(), "DELETED a/y@"+del)
	checkEvents(t, events(t, legacy, 4),
		"ADDED a/x@"+x1.GetResourceVersion(),
		"ADDED a/y@"+y.GetResourceVersion(), "MODIFIED a/x@"+x2.GetResourceVersion(), "DELETED a/y@"+del)
}

// A watch from a compacted revision ends with a 410 Expired Error event.
// (E7)
func TestE7CompactedWatch(t *testing.T) {
	wd := newWorld(t)
	wd.create(t, pod("a/x"))
	old := wd.rev(t)
	wd.create(t, pod("a/y"))
	wd.create(t, pod("a/z")) // a watch from old starts at old+1: compact past it
	if err := wd.etcd.Compact(context.Background(), wd.rev(t)); err != nil {
		t.Fatal(err)
	}
	w := wd.watch(t, metav1.ListOptions{ResourceVersion: strconv.FormatInt(old, 10)})
	e := next(t, w)
	status, ok := e.Object.(*metav1.Status)
	if e.Type != watch.Error || !ok || status.Code != 410 || status.Reason != metav1.StatusReasonExpired ||
		status.Message != "The resourceVersion for the provided watch is too old." {
		t.Fatalf("got %s, want a 410 Expired Error event", describe(e))
	}
	if _, open := <-w.ResultChan(); open {
		t.Error("watch still open after its Error event")
	}
}

// Bookmarks (empty objects of the kind, carrying only the RV) reach only
// watches that allowed them, when etcd reports progress. etcd reports
// progress only for watches that have caught up with their start
// revision, so a watch from the current RV gets one only after a write.
// (E8)
func TestE8Bookmarks(t *testing.T) {
	ctx := context.Background()
	wd := newWorld(t)
	wd.create(t, pod("a/x"))
	rv := strconv.FormatInt(wd.rev(t), 10)
	with := wd.watch(t, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	without := wd.watch(t, metav1.ListOptions{ResourceVersion: rv})
	y := wd.create(t, pod("a/y"))
	checkEvents(t, events(t, with, 1), "ADDED a/y@"+y.GetResourceVersion())
	checkEvents(t, events(t, without, 1), "ADDED a/y@"+y.GetResourceVersion())
	requestProgressUntil(ctx, t, wd.lw, func() {
		if e := describe(next(t, with)); e != "BOOKMARK /@"+y.GetResourceVersion() {
			t.Errorf("got %s, want a BOOKMARK at %s", e, y.GetResourceVersion())
		}
	})
	z := wd.create(t, pod("a/z"))
	if e := describe(next(t, without)); e != "ADDED a/z@"+z.GetResourceVersion() {
		t.Errorf("watch without bookmarks got %s, want the next ADDED", e)
	}
}

// requestProgressUntil asks etcd for progress every 10ms while wait runs:
// a progress request is answered only while every watch on the client's
// stream is caught up, so one request can go unanswered.
func requestProgressUntil(ctx context.Context, t testing.TB, lw *listwatch.ListerWatcher, wait func()) {
	t.Helper()
	asking, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for asking.Err() == nil {
			_ = lw.RequestProgress(asking)
			select {
			case <-asking.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	wait()
	stop()
	<-done
}

// Watch-list streams every object as ADDED (each at its own revision),
// then a bookmark annotated initial-events-end at the snapshot revision,
// then live events; a future RV is a 504 Error event. (E9)
func TestE9WatchList(t *testing.T) {
	wd := newWorld(t)
	x := wd.create(t, pod("a/x"))
	y := wd.create(t, pod("a/y"))
	snapshot := strconv.FormatInt(wd.rev(t), 10)
	w := wd.watch(t, metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	checkEvents(t, events(t, w, 3),
		"ADDED a/x@"+x.GetResourceVersion(), "ADDED a/y@"+y.GetResourceVersion(),
		"BOOKMARK /@"+snapshot+" initial-events-end")
	z := wd.create(t, pod("a/z"))
	checkEvents(t, events(t, w, 1), "ADDED a/z@"+z.GetResourceVersion())

	future := wd.watch(t, metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersion: "999",
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if e := describe(next(t, future)); !strings.HasPrefix(e, "ERROR 504 Timeout: Timeout: Too large resource version: 999") {
		t.Errorf("future watch-list: %s", e)
	}
	// kube-apiserver validates the options before it reads anything: 422
	// Invalid on ListOptions (E11).
	const want = `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`
	if _, err := wd.lw.Watch(metav1.ListOptions{SendInitialEvents: ptr.To(true)}); !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("sendInitialEvents without NotOlderThan: %v, want %s", err, want)
	}
}

// A server whose WatchList feature is off refuses a watch that asks for
// initial events, 422, and serves every other request (E11); the
// feature can be turned back on while it serves.
func TestE11WatchListFeatureOff(t *testing.T) {
	wd := newWorld(t)
	x := wd.create(t, pod("a/x"))
	wd.lw.SetWatchListFeature(false)
	watchList := metav1.ListOptions{SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true}
	const want = `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled`
	if _, err := wd.lw.Watch(watchList); !apierrors.IsInvalid(err) || err.Error() != want {
		t.Errorf("watch-list with the feature off: %v, want %s", err, want)
	}
	if _, err := wd.lw.List(metav1.ListOptions{ResourceVersion: "0"}); err != nil {
		t.Errorf("LIST with the feature off: %v", err)
	}
	w := wd.watch(t, metav1.ListOptions{ResourceVersion: x.GetResourceVersion()})
	y := wd.create(t, pod("a/y"))
	checkEvents(t, events(t, w, 1), "ADDED a/y@"+y.GetResourceVersion())
	wd.lw.SetWatchListFeature(true)
	if !wd.lw.WatchListFeature() {
		t.Error("the feature did not come back on")
	}
	wl := wd.watch(t, watchList)
	if e := describe(next(t, wl)); !strings.HasPrefix(e, "ADDED a/") {
		t.Errorf("watch-list with the feature back on: %s", e)
	}
}

// SendInitialEvents=false from RV "" starts at the current revision: no
// initial events, no replay of history. (E9)
func TestWatchWithoutInitialEvents(t *testing.T) {
	wd := newWorld(t)
	x := wd.create(t, pod("a/x"))
	x.SetLabels(map[string]string{"v": "2"})
	wd.update(t, x)
	w := wd.watch(t, metav1.ListOptions{SendInitialEvents: ptr.To(false),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	y := wd.create(t, pod("a/y"))
	checkEvents(t, events(t, w, 1), "ADDED a/y@"+y.GetResourceVersion())
}

// TimeoutSeconds closes the watch.
func TestWatchTimeout(t *testing.T) {
	// The timeout is measured on the ListerWatcher's clock, as
	// kube-apiserver's timer measures it: 11 minutes of fake time end a
	// 10-minute watch; no wall-clock time passes, and none is needed.
	wd := newWorld(t)
	fake := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	wd.lw = listwatch.NewListerWatcher(wd.etcd.Client(), listwatch.Pods, listwatch.Options{Clock: fake})
	w := wd.watch(t, metav1.ListOptions{ResourceVersion: strconv.FormatInt(wd.rev(t), 10), TimeoutSeconds: ptr.To[int64](600)})
	if !fake.HasWaiters() {
		t.Fatal("the watch's timeout is not a timer on the ListerWatcher's clock")
	}
	fake.Step(599 * time.Second)
	wd.create(t, pod("a/alive"))
	if e := describe(next(t, w)); !strings.HasPrefix(e, "ADDED") {
		t.Fatalf("at 9m59s got %s, want the watch still open (ADDED)", e)
	}
	fake.Step(11*time.Minute - 599*time.Second)
	select {
	case e, open := <-w.ResultChan():
		if open {
			t.Errorf("got %s, want the channel closed by the timeout", describe(e))
		}
	case <-testdeadline.Context(t).Done():
		t.Fatal("watch still open at the test binary's deadline, though its timeout passed on the fake clock")
	}
}

// A stored value that is not an object fails LIST with a 500 naming the
// key and ends a watch with a 500 Error event, as kube-apiserver's do
// (E12; corrupt_test.go compares the whole answers).
func TestCorruptValue(t *testing.T) {
	ctx := context.Background()
	wd := newWorld(t)
	wd.create(t, pod("a/x"))
	w := wd.watch(t, metav1.ListOptions{ResourceVersion: strconv.FormatInt(wd.rev(t), 10)})
	if _, err := wd.etcd.Client().Put(ctx, "/registry/pods/a/broken", "{not json"); err != nil {
		t.Fatal(err)
	}
	_, err := wd.lw.List(metav1.ListOptions{})
	if !listwatch.IsStorageReadError(err) || apierrors.ReasonForError(err) != metav1.StatusReasonStoreReadError ||
		!strings.Contains(err.Error(), "/registry/pods/a/broken") {
		t.Errorf("list: %v, want a 500 StorageReadError naming the key", err)
	}
	if e := describe(next(t, w)); !strings.HasPrefix(e, "ERROR 500 InternalError") {
		t.Errorf("watch: %s, want a 500 Error event", e)
	}
	if _, err := wd.lw.List(metav1.ListOptions{ResourceVersion: "abc"}); !apierrors.IsBadRequest(err) {
		t.Errorf("malformed RV: %v, want BadRequest", err)
	}
}
