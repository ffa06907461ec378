package apistorage_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/internal/testdeadline"
)

// The watch half of registry_oracle_test.go: a WATCH opened on
// apistorage and on kube-apiserver's registry, and settling, which reads
// both until etcd's revision is confirmed and compares them.

// watchPair is one WATCH made on both, and what each delivered (the
// progress bookmarks settling asked for left out).
type watchPair struct {
	name    string
	w       [2]watch.Interface // apistorage, registry
	events  [2][]watch.Event
	ended   [2]bool
	synced  [2]int64
	differs bool
}

// watch opens one WATCH on both; if either fails, both errors are
// compared.
func (o *oracle) watch(t *testing.T, s shape, opts metav1.ListOptions) {
	t.Helper()
	opts.FieldSelector, opts.LabelSelector = s.fields, s.labels
	name := "WATCH in " + strconv.Quote(s.ns) + " " + describeOpts(opts)
	ours, errA := o.ours.ListerWatcher(s.ns).WatchWithContext(context.Background(), opts)
	theirs, errB := o.theirs.Watch(o.context(s.ns), internal(t, opts, true))
	if errA != nil || errB != nil {
		for _, w := range []watch.Interface{ours, theirs} {
			if w != nil {
				w.Stop()
			}
		}
		if d := cmp.Diff(replyOf(nil, errB), replyOf(nil, errA)); d != "" {
			t.Errorf("%s: apistorage differs from kube-apiserver's registry (-registry +apistorage):\n%s", name, d)
		}
		return
	}
	p := &watchPair{name: name, w: [2]watch.Interface{ours, theirs}}
	o.open = append(o.open, p)
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		p.snapshotRead(t)
	}
}

// snapshotRead waits for each side's first event. An etcd3 watcher reads
// the snapshot of its initial events on a goroutine of its own after
// Watch returns: a write in that moment would be an initial event on one
// side and a live event on the other. A watch-list that allows
// bookmarks always sends one event at least (its initial-events-end
// bookmark, or an Error).
func (p *watchPair) snapshotRead(t *testing.T) {
	t.Helper()
	for i := range p.w {
		select {
		case e, ok := <-p.w[i].ResultChan():
			p.take(i, e, ok)
		case <-testdeadline.Context(t).Done():
			t.Fatalf("%s: side %d sent nothing", p.name, i)
		}
	}
}

func (o *oracle) stopAll() {
	for _, p := range o.open {
		p.w[0].Stop()
		p.w[1].Stop()
	}
	o.open = nil
}

// settle reads every open watch on both sides until a progress bookmark
// confirms etcd's revision (or the watch ends), and compares them. Both
// are etcd3 watchers: each turns every progress notification its etcd
// client gets into a BOOKMARK, allowed or not.
func (o *oracle) settle(t *testing.T) {
	t.Helper()
	rev := o.rev(t)
	progress := [2]func(context.Context) error{o.ours.RequestProgress, o.theirs.Storage.Storage.RequestWatchProgress}
	for _, p := range o.open {
		for i := range p.w {
			p.readTo(t, i, rev, progress[i], o.fence)
		}
		if d := cmp.Diff(p.events[1], p.events[0]); d != "" && !p.differs {
			p.differs = true
			t.Errorf("%s: apistorage's events differ from kube-apiserver's registry (-registry +apistorage):\n%s", p.name, d)
		}
	}
}

// readTo reads side i until a progress bookmark at rev or later, or the
// end of the watch, asking for progress every 20 ms until etcd answers
// (it answers only once every watch on the client has caught up). Only
// the test binary's deadline bounds the wait (package testdeadline): it
// guards against a hang, and is no timing assumption.
func (p *watchPair) readTo(t *testing.T, i int, rev int64, progress func(context.Context) error, fence func(testing.TB)) {
	t.Helper()
	deadline := testdeadline.Context(t)
	unanswered := false
	for !p.ended[i] && p.synced[i] < rev {
		if unanswered {
			fence(t)
		}
		if err := progress(context.Background()); err != nil {
			t.Fatal(err)
		}
		retry := time.NewTimer(20 * time.Millisecond)
		select {
		case e, ok := <-p.w[i].ResultChan():
			p.take(i, e, ok)
			unanswered = false
		case <-retry.C:
			unanswered = true
		case <-deadline.Done():
			t.Fatalf("%s: side %d did not confirm revision %d: %v", p.name, i, rev, p.events[i])
		}
		retry.Stop()
	}
}

func (p *watchPair) take(i int, e watch.Event, open bool) {
	u, isObj := e.Object.(*unstructured.Unstructured)
	switch {
	case !open:
		p.ended[i] = true
	case e.Type == watch.Error:
		p.ended[i] = true
		p.events[i] = append(p.events[i], e)
	case e.Type == watch.Bookmark && isObj && u.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "":
		n, _ := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
		p.synced[i] = max(p.synced[i], n)
	default:
		p.events[i] = append(p.events[i], e)
	}
}
