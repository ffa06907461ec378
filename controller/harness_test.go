package controller_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/cgloop"
	dt "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

var pods = schema.GroupResource{Resource: "pods"}

// step is what the reconcile script does on one call for one key.
type step struct {
	err   string        // return this error
	after time.Duration // ask for RequeueAfter
	write bool          // write the object back and report the write's resourceVersion
	block bool          // after reading, wait for Unblock
}

func fail(msg string) step           { return step{err: msg} }
func after(d time.Duration) step     { return step{after: d} }
func failAfter(d time.Duration) step { return step{err: "boom", after: d} }
func write() step                    { return step{write: true} }
func block() step                    { return step{block: true} }

var ok = step{}

// ctlConfig sets up both controllers the same way.
type ctlConfig struct {
	Stack   informer.Stack
	Workers int
	Guard   bool
	// Script lists, per key, what its reconciles do, in order; once a
	// key's steps run out, its reconciles succeed.
	Script map[string][]step
}

// ctlWorld runs cachelab's Controller on cachelab's informer and
// workqueue, and internal/cgloop's loop on client-go's, over the two scripted
// servers of an InformerWorld, with one reconcile script, in one
// synctest bubble (so both share its fake clock). After every settled
// step it compares what each loop did since the last: every handler
// enqueue, workqueue operation (get, requeue with the limiter's delay,
// add-after, forget, done), guard decision and reconcile (what it read
// from the lister and what it returned), each stamped with the bubble's
// time since start; then each queue's Len and NumRequeues.
//
// Times are left out of a step that listed (see unstamped).
//
// Order: with one worker, and no list in the step, the whole sequence is
// compared in order. Otherwise only each key's own sequence is: workers
// interleave freely across keys, and a list hands the handler its
// objects in map order, in client-go and here. A key's own sequence stays
// ordered because only one worker holds a key at a time (W2) and each
// step writes at most one object.
type ctlWorld struct {
	*dt.InformerWorld
	cfg     ctlConfig
	start   time.Time
	sides   [2]*side
	holding atomic.Bool
	cl      *controller.Controller
	cg      *cgloop.Controller
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	runs    atomic.Int32 // controllers whose Run has returned
	ended   bool         // CancelControllers ran
	unblock sync.Once
}

// side is one implementation's half: its server, how its reconcile reads
// its cache, its trace, and how far into the script each key is.
type side struct {
	server *dt.Server
	get    func(namespace, name string) (runtime.Object, error)
	log    keyedLog
	gate   chan struct{} // block steps wait for it to close
	mu     sync.Mutex
	calls  map[string]int
}

// inCtl runs body as a subtest per stack, each in its own bubble, stops
// the world and checks that cachelab's transcript holds want's lines.
func inCtl(t *testing.T, stacks []informer.Stack, cfg ctlConfig, body func(w *ctlWorld), want ...string) {
	t.Helper()
	for _, st := range stacks {
		t.Run(string(st), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := cfg
				c.Stack = st
				w := newCtlWorld(t, c)
				body(w)
				w.Stop()
				got := w.Transcript()
				if testing.Verbose() {
					t.Log(got)
				}
				for _, line := range want {
					if !strings.Contains(got, line) {
						t.Errorf("transcript lacks %q:\n%s", line, got)
					}
				}
			})
		})
	}
}

func newCtlWorld(t *testing.T, cfg ctlConfig) *ctlWorld {
	iw := dt.NewInformerWorld(t, dt.InformerConfig{Stack: cfg.Stack})
	w := &ctlWorld{InformerWorld: iw, cfg: cfg, start: time.Now()}
	clLister := informer.NewLister(iw.CLI.GetIndexer(), pods)
	cgLister := cache.NewGenericLister(iw.CGI.GetIndexer(), pods)
	w.sides[0] = &side{server: iw.CL, calls: map[string]int{}, gate: make(chan struct{}),
		get: func(ns, name string) (runtime.Object, error) {
			if ns == "" {
				return clLister.Get(name) // cluster-scoped
			}
			return clLister.ByNamespace(ns).Get(name)
		}}
	w.sides[1] = &side{server: iw.CG, calls: map[string]int{}, gate: make(chan struct{}),
		get: func(ns, name string) (runtime.Object, error) {
			if ns == "" {
				return cgLister.Get(name)
			}
			return cgLister.ByNamespace(ns).Get(name)
		}}
	opts := func(s *side) controller.Options {
		return controller.Options{Reconcile: w.reconciler(s), Workers: cfg.Workers,
			StalenessGuard: cfg.Guard, Trace: w.tracer(s)}
	}
	clOpts := opts(w.sides[0])
	clOpts.Informer = iw.CLI
	c, err := controller.New(context.Background(), clOpts)
	if err != nil {
		t.Fatal(err)
	}
	cg, err := cgloop.New(iw.CGI, cgloop.Options{Reconcile: w.reconciler(w.sides[1]), Workers: cfg.Workers,
		StalenessGuard: cfg.Guard, Trace: w.tracer(w.sides[1])})
	if err != nil {
		t.Fatal(err)
	}
	w.cl, w.cg = c, cg
	iw.AddLayer(w.compareLoops)
	return w
}

// Start runs both controllers (they wait for their caches), then both
// informers, and settles.
func (w *ctlWorld) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.wg.Go(func() { w.cl.Run(ctx); w.runs.Add(1) })
	w.wg.Go(func() { w.cg.Run(ctx); w.runs.Add(1) })
	w.InformerWorld.Start()
}

// Stop cancels both controllers, waits for their Run to return (workers
// gone, queues drained), compares what the shutdown did, and stops the
// informers.
func (w *ctlWorld) Stop() {
	w.T.Helper()
	if w.cancel != nil {
		if !w.ended {
			w.CancelControllers()
		}
		w.Unblock()
		w.wg.Wait()
		w.Note("controllers returned")
		w.Settle()
	}
	w.InformerWorld.Stop()
}

// CancelControllers ends both controllers' context and settles: their
// queues shut down with drain, and Run waits for the workers.
func (w *ctlWorld) CancelControllers() {
	w.cancel()
	w.ended = true
	w.Note("cancel controllers")
	w.Settle()
}

// HoldWatches makes both caches lag: later writes, the controllers' own
// included, reach the informers only at ReleaseWatches.
func (w *ctlWorld) HoldWatches() {
	w.holding.Store(true)
	w.Both("hold watches", (*dt.Server).HoldWatches)
}

// ReleaseWatches delivers what was held and settles.
func (w *ctlWorld) ReleaseWatches() {
	w.holding.Store(false)
	w.Both("release watches", (*dt.Server).ReleaseWatches)
	w.Settle()
}

// Unblock lets every reconcile waiting in a block step go on, now and
// later (once per world), and settles.
func (w *ctlWorld) Unblock() {
	w.unblock.Do(func() {
		for _, s := range w.sides {
			close(s.gate)
		}
		w.Note("unblock reconciles")
		w.Settle()
	})
}

func (w *ctlWorld) tracer(s *side) func(controller.Event) {
	return func(e controller.Event) { s.log.add(e.Key, w.stamp(e.String())) }
}

func (w *ctlWorld) stamp(line string) string {
	return fmt.Sprintf("+%v %s", time.Since(w.start), line)
}

// reconciler is the scripted reconcile, the same on both sides: read the
// key from the lister (level-triggered), then do the key's next step.
func (w *ctlWorld) reconciler(s *side) controller.ReconcileFunc {
	return func(_ context.Context, key string) (controller.Result, error) {
		ns, name, err := store.SplitMetaNamespaceKey(key)
		if err != nil {
			return controller.Result{}, err
		}
		obj, err := s.get(ns, name)
		s.log.add(key, w.stamp(fmt.Sprintf("reconcile: read %s %s", key, describeRead(obj, err))))
		st := s.next(key, w.cfg.Script[key])
		if st.block {
			<-s.gate
		}
		var res controller.Result
		if st.write && err == nil {
			res.Wrote = w.writeBack(s, obj)
		}
		res.RequeueAfter = st.after
		if st.err != "" {
			return res, errors.New(st.err)
		}
		return res, nil
	}
}

func describeRead(obj runtime.Object, err error) string {
	switch {
	case apierrors.IsNotFound(err):
		return "not found"
	case err != nil:
		return "error " + err.Error()
	}
	return dt.Describe(obj)
}

// next is the key's next scripted step.
func (s *side) next(key string, steps []step) step {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.calls[key]
	s.calls[key]++
	if n < len(steps) {
		return steps[n]
	}
	return ok
}

// writeBack updates obj on the side's own server, as a controller writes
// status, and returns the resourceVersion the server gave the write. The
// watches must be held: a write the informer sees at once would race the
// worker's own Done, and the key's sequence would not be ordered.
func (w *ctlWorld) writeBack(s *side, obj runtime.Object) string {
	if !w.holding.Load() {
		w.T.Errorf("a reconcile wrote while watches were not held; hold them first")
	}
	u := obj.(*unstructured.Unstructured).DeepCopy()
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	n, _ := strconv.Atoi(labels["written"])
	labels["written"] = strconv.Itoa(n + 1)
	u.SetLabels(labels)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.server.Write(watch.Modified, u)
	return strconv.FormatInt(s.server.Rev(), 10)
}

// compareLoops is the layer this package adds to the world's Settle.
func (w *ctlWorld) compareLoops() {
	w.T.Helper()
	cl, cg := w.sides[0].log.take(), w.sides[1].log.take()
	for _, e := range cl {
		w.Note(e.line)
	}
	if w.Relisted {
		cl, cg = unstamped(cl), unstamped(cg)
	}
	if max(w.cfg.Workers, 1) == 1 && !w.Relisted {
		w.Compare("controller trace", lines(cl), lines(cg))
	} else {
		w.Compare("controller trace, per key", byKey(cl), byKey(cg))
	}
	w.Compare("workqueue state", w.queueState(w.cl.Queue().Len(), w.cl.Queue().NumRequeues),
		w.queueState(w.cg.Queue().Len(), w.cg.Queue().NumRequeues))
}

// queueState is a queue's length and every scripted key's failure count.
func (w *ctlWorld) queueState(n int, requeues func(string) int) []string {
	out := []string{fmt.Sprintf("len=%d", n)}
	for _, key := range sortedKeys(w.cfg.Script) {
		out = append(out, fmt.Sprintf("%s requeues=%d", key, requeues(key)))
	}
	return out
}

func sortedKeys(m map[string][]step) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// keyedLog records trace lines with the key they are about.
type keyedLog struct {
	mu      sync.Mutex
	entries []entry
	seen    int
}

type entry struct{ key, line string }

func (l *keyedLog) add(key, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, entry{key, line})
}

// take returns the entries added since the last take.
func (l *keyedLog) take() []entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]entry(nil), l.entries[l.seen:]...)
	l.seen = len(l.entries)
	return out
}

// unstamped drops the times: a relist after a broken watch comes after
// the reflector's jittered backoff, a different instant on each side.
func unstamped(es []entry) []entry {
	out := make([]entry, len(es))
	for i, e := range es {
		_, rest, _ := strings.Cut(e.line, " ")
		out[i] = entry{e.key, "+? " + rest}
	}
	return out
}

func lines(es []entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.line
	}
	return out
}

func byKey(es []entry) map[string][]string {
	out := map[string][]string{}
	for _, e := range es {
		out[e.key] = append(out[e.key], e.line)
	}
	return out
}
