package reconcile_test

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/store"
	"github.com/cachelab/cachelab/workqueue"
)

// world is an embedded etcd (at revision 1, so its first write is
// revision 2), a writer of pods, a cachelab informer over it and a
// Lister over the informer's cache. The informer starts with start.
type world struct {
	ctx    context.Context
	etcd   *listwatch.Embedded
	lw     *listwatch.ListerWatcher
	pods   *listwatch.Writer
	inf    *informer.SharedIndexInformer
	lister *informer.Lister
	close  func()
}

// newWorld starts etcd and creates the pods shop/<name> in order.
func newWorld(names ...string) *world { return newWorldWith(informer.Options{}, names...) }

// newWorldWith is newWorld with an informer made with opts.
func newWorldWith(opts informer.Options, names ...string) *world {
	ctx, cancel := context.WithCancel(context.Background())
	etcd, err := listwatch.StartEmbedded(ctx, listwatch.EmbeddedOptions{})
	if err != nil {
		panic(err)
	}
	w := &world{ctx: ctx, etcd: etcd, pods: listwatch.NewWriter(etcd.Client(), listwatch.Pods, listwatch.WriterOptions{})}
	for _, name := range names {
		w.create(name)
	}
	w.lw = listwatch.NewListerWatcher(etcd.Client(), listwatch.Pods, listwatch.Options{})
	opts.ExampleObject = &unstructured.Unstructured{}
	w.inf = informer.New(w.lw, opts)
	w.lister = informer.NewLister(w.inf.GetIndexer(), schema.GroupResource{Resource: "pods"})
	w.close = func() { cancel(); etcd.Close() }
	return w
}

// start runs the informer until the world closes.
func (w *world) start() {
	done := make(chan struct{})
	go func() { defer close(done); w.inf.Run(w.ctx) }()
	stop := w.close
	w.close = func() { stop(); <-done }
}

// label sets shop/<name>'s label v, as a user's edit would.
func (w *world) label(name, v string) {
	p := newPod(name)
	p.SetLabels(map[string]string{"v": v})
	if _, err := w.pods.Update(w.ctx, p); err != nil {
		panic(err)
	}
}

// create creates shop/<name>.
func (w *world) create(name string) {
	if _, err := w.pods.Create(w.ctx, newPod(name)); err != nil {
		panic(err)
	}
}

// compact makes etcd forget its history before its current revision.
func (w *world) compact() {
	rev, err := w.etcd.Revision(w.ctx)
	if err == nil {
		err = w.etcd.Compact(w.ctx, rev)
	}
	if err != nil {
		panic(err)
	}
}

// remove deletes shop/<name>.
func (w *world) remove(name string) {
	if _, err := w.pods.Delete(w.ctx, "shop", name, listwatch.Preconditions{}); err != nil {
		panic(err)
	}
}

// newPod is a pod object for the writer to create.
func newPod(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	u.SetNamespace("shop")
	u.SetName(name)
	return u
}

// read is what every reconcile starts with: the object named by key, from
// the cache, as "name@resourceVersion", or "not found".
func read(lister *informer.Lister, key string) string {
	ns, name, err := store.SplitMetaNamespaceKey(key)
	if err != nil {
		return err.Error()
	}
	obj, err := lister.ByNamespace(ns).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return "not found"
	case err != nil:
		return err.Error()
	}
	m := obj.(metav1.Object)
	return m.GetName() + "@" + m.GetResourceVersion()
}

// timeline prints the controller's steps with the time on its clock, and
// passes each handler enqueue on to enqueued (so that a cell can wait
// for the informer's events).
type timeline struct {
	clock    *clocktesting.FakeClock
	start    time.Time
	enqueued chan string
	show     map[controller.Kind]bool
}

// newTimeline prints the steps of the given kinds.
func newTimeline(kinds ...controller.Kind) *timeline {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	t := &timeline{clock: clocktesting.NewFakeClock(start), start: start, enqueued: make(chan string, 100), show: map[controller.Kind]bool{}}
	for _, k := range kinds {
		t.show[k] = true
	}
	return t
}

// trace is the controller's Options.Trace. Enqueues come from the
// informer's goroutine: they go to the channel, for the cell to print in
// its own order; every other step is the worker's, which in a cell is the
// cell's own goroutine.
func (t *timeline) trace(e controller.Event) {
	switch {
	case e.Kind == controller.Enqueue:
		t.enqueued <- e.String()
	case t.show[e.Kind]:
		fmt.Printf("%-7s %s\n", fmt.Sprintf("+%v", t.clock.Since(t.start)), e)
	}
}

// advance moves the controller's clock on by d, and adds to the queue
// what is due by then. (The queue's own goroutine does the same when its
// timer fires; calling Flush here means the cell need not wait for it.)
func (t *timeline) advance(q *workqueue.RateLimitingQueue[string], d time.Duration) {
	t.clock.Step(d)
	q.Flush()
}

// object is a pod in the cache at resourceVersion rv, for a cell that
// plays the informer itself.
func object(name, rv string) runtime.Object {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, ResourceVersion: rv}}
}

// waitingClock is a fake clock that says when someone starts waiting on
// it: After sends on waiting once the wait is registered, so a Step
// after that receive always ends the wait. (Stepping when its waiters
// are counted could step before the wait is registered, and the waiter
// would then wait for ever.)
type waitingClock struct {
	*clocktesting.FakeClock
	waiting chan struct{}
}

func newWaitingClock() waitingClock {
	return waitingClock{clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), make(chan struct{}, 10)}
}

func (c waitingClock) After(d time.Duration) <-chan time.Time {
	ch := c.FakeClock.After(d)
	select {
	case c.waiting <- struct{}{}:
	default: // nobody is listening any more (the cell has moved on)
	}
	return ch
}
