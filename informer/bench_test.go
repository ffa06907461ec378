// Benchmarks of cachelab's SharedIndexInformer against client-go v0.37.2's,
// side by side in one run, over an embedded etcd started in this process.
// Every benchmark ends in /impl=cachelab and /impl=client-go, for both
// stacks (/stack=default: client-go's default gates; /stack=classic:
// InOrderInformers and WatchListClient off, so DeltaFIFO and LIST+WATCH),
// so benchstat prints cachelab/client-go ratios as a column:
//
//	go test ./informer -run XXX -bench . -benchtime 3x -count 5 -timeout 60m > /tmp/bench_informer.txt
//	benchstat -col '/impl@(client-go cachelab)' /tmp/bench_informer.txt
//
// (Plain -col /impl takes the first implementation seen, cachelab, as the
// base; the order given above makes "vs base" read cachelab/client-go.)
// That takes about five minutes on 2 cores, most of it syncing 100,000
// pods. One op of each benchmark is a whole scenario (a sync, or a burst
// of events), so -benchtime 3x gives meaningful numbers; the default
// benchtime (1s) works too.
//
// -count runs each sub-benchmark N times in a row, so a slow drift of the
// machine lands on one implementation. To check a small difference, run
// the implementations alternately in separate processes (a loop over
// `informer.test -test.bench '<name>/impl=<impl>$' -test.count 1`).
//
//	BenchmarkStartToSynced  new informer → Run → HasSynced, over n pods
//	BenchmarkEvents         a burst of updates through a synced informer:
//	                        events/s, and p50/p99 from write to handler
//	BenchmarkMemory         live heap per cached object after a sync
//
// Both informers see the same etcd, the same ListerWatcher and the same
// pods, and have one handler registered before Run, as a controller would.

package informer_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clientfeatures "k8s.io/client-go/features"
	clientfeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/internal/testdeadline"
	"github.com/cachelab/cachelab/listwatch"
)

// The axes every benchmark runs along.
var (
	benchImpls  = []string{"cachelab", "client-go"}
	benchStacks = []informer.Stack{informer.Default, informer.Classic}
)

// BenchmarkStartToSynced: one op is a new informer's Run until HasSynced
// (the informer's synced channel closes), over n pods already in etcd. The
// informer is then stopped, off the clock. Its handler does nothing, but
// its goroutine does receive every initial OnAdd while the sync goes on.
func BenchmarkStartToSynced(b *testing.B) {
	e := setupBench(b)
	lw := listwatch.NewListerWatcher(e.Client(), listwatch.Pods, listwatch.Options{})
	filled := 0
	for _, n := range []int{10_000, 100_000} {
		fillPods(b, e.Client(), filled, n)
		filled = n
		for _, stack := range benchStacks {
			for _, impl := range benchImpls {
				b.Run(fmt.Sprintf("stack=%s/n=%d/impl=%s", stack, n, impl), func(b *testing.B) {
					useStack(b, impl, stack)
					benchStartToSynced(b, lw, impl, stack, n)
				})
			}
		}
	}
}

func benchStartToSynced(b *testing.B, lw *listwatch.ListerWatcher, impl string, stack informer.Stack, n int) {
	b.ReportAllocs()
	for b.Loop() {
		r := startInformer(b, impl, stack, lw, benchHandler{})
		awaitClosed(b, r.synced, "informer sync")
		b.StopTimer()
		r.stop()
		// After Run returns: a DeltaFIFO reports synced just before the
		// last item is processed (D6).
		if got := r.cached(); got != n {
			b.Fatalf("cached %d objects, want %d", got, n)
		}
		runtime.GC() // the last cache is garbage: collect it off the clock
		b.StartTimer()
	}
}

// BenchmarkEvents: one op is a burst of eventsPerOp pod updates written to
// etcd by several writers at once, until the handler of an informer that
// synced before the burst has heard every one. It reports the handler's
// throughput (events/s) and percentiles of the latency from the return of
// each etcd write to its OnUpdate call (p50-µs, p99-µs). A watch event can
// reach the handler before the write's reply reaches the writer, so a
// latency can be negative.
func BenchmarkEvents(b *testing.B) {
	e := setupBench(b)
	fillPods(b, e.Client(), 0, eventPods)
	lw := listwatch.NewListerWatcher(e.Client(), listwatch.Pods, listwatch.Options{})
	for _, stack := range benchStacks {
		for _, impl := range benchImpls {
			b.Run(fmt.Sprintf("stack=%s/impl=%s", stack, impl), func(b *testing.B) {
				useStack(b, impl, stack)
				benchEvents(b, e, lw, impl, stack)
			})
		}
	}
}

const (
	eventPods    = 1_000 // pods in etcd, updated round-robin
	eventsPerOp  = 5_000 // updates per op
	eventWriters = 8     // goroutines writing at once
)

func benchEvents(b *testing.B, e *listwatch.Embedded, lw *listwatch.ListerWatcher, impl string, stack informer.Stack) {
	rec := &updateRecorder{}
	r := startInformer(b, impl, stack, lw, benchHandler{update: rec.onUpdate})
	awaitClosed(b, r.handlerSynced, "handler sync")
	var latencies []time.Duration
	gen := 0
	for b.Loop() {
		done := rec.expect(eventsPerOp)
		sent := writeBurst(b, e.Client(), eventsPerOp, gen)
		awaitClosed(b, done, "burst delivery")
		b.StopTimer()
		latencies = append(latencies, matchLatencies(b, sent, rec.take())...)
		gen++
		b.StartTimer()
	}
	events := float64(len(latencies))
	r.stop()
	compactEtcd(b, e)
	slices.Sort(latencies)
	b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(micros(latencies[len(latencies)/2]), "p50-µs")
	b.ReportMetric(micros(latencies[len(latencies)*99/100]), "p99-µs")
}

// BenchmarkMemory: one op syncs a new informer over n pods and measures the
// live heap (after runtime.GC) before the informer was made and once its
// handler has had the initial list; the difference over n is reported as
// heap-B/obj. It counts everything the running informer keeps alive: the
// cache and its index, queue and listener buffers, and the open watch
// (including etcd's server-side half of it, which lives in this process
// too and is the same for both implementations). ns/op includes the GCs
// and means little here.
func BenchmarkMemory(b *testing.B) {
	const n = 10_000
	e := setupBench(b)
	fillPods(b, e.Client(), 0, n)
	lw := listwatch.NewListerWatcher(e.Client(), listwatch.Pods, listwatch.Options{})
	for _, stack := range benchStacks {
		for _, impl := range benchImpls {
			b.Run(fmt.Sprintf("stack=%s/n=%d/impl=%s", stack, n, impl), func(b *testing.B) {
				useStack(b, impl, stack)
				benchMemory(b, lw, impl, stack, n)
			})
		}
	}
}

func benchMemory(b *testing.B, lw *listwatch.ListerWatcher, impl string, stack informer.Stack, n int) {
	var grown, ops int64
	for b.Loop() {
		before := liveHeap()
		r := startInformer(b, impl, stack, lw, benchHandler{})
		awaitClosed(b, r.handlerSynced, "handler sync")
		grown += int64(liveHeap()) - int64(before)
		ops++
		r.stop()
		if got := r.cached(); got != n {
			b.Fatalf("cached %d objects, want %d", got, n)
		}
	}
	b.ReportMetric(float64(grown)/float64(ops*int64(n)), "heap-B/obj")
}

// liveHeap is the heap in use once garbage is collected. Two cycles, so
// that objects freed by finalizers in the first are gone too.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// ---- the two informers behind one face ----

// benchHandler is what a benchmark wants to hear: updates, if update is
// set. (Adds are ignored by both implementations' Funcs adapters.)
type benchHandler struct {
	update func(oldObj, newObj any)
}

// runningInformer is a started informer of either implementation.
type runningInformer struct {
	synced        <-chan struct{} // closed when the informer HasSynced
	handlerSynced <-chan struct{} // closed when the handler has had the initial list
	cached        func() int      // how many objects the cache holds
	stop          func()          // ends Run and waits until it returned; idempotent
}

// startInformer makes an informer of impl over lw with h as its one
// handler, and runs it in a goroutine. The stack of a client-go informer is
// set by the feature gates (useStack), read when Run starts.
func startInformer(b *testing.B, impl string, stack informer.Stack, lw *listwatch.ListerWatcher, h benchHandler) *runningInformer {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var run func(context.Context)
	r := &runningInformer{}
	var err error
	switch impl {
	case "cachelab":
		inf := informer.New(lw, informer.Options{Stack: stack, ExampleObject: benchPodExample()})
		var reg informer.Registration
		reg, err = inf.AddEventHandler(informer.ResourceEventHandlerFuncs{UpdateFunc: h.update})
		if err == nil {
			r.synced, r.handlerSynced = inf.Synced(), reg.Synced()
		}
		r.cached = func() int { return len(inf.GetStore().ListKeys()) }
		run = inf.Run
	case "client-go":
		inf := cache.NewSharedIndexInformer(lw, benchPodExample(), 0, cache.Indexers{})
		var reg cache.ResourceEventHandlerRegistration
		reg, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{UpdateFunc: h.update})
		if err == nil {
			r.synced, r.handlerSynced = inf.HasSyncedChecker().Done(), reg.HasSyncedChecker().Done()
		}
		r.cached = func() int { return len(inf.GetStore().ListKeys()) }
		run = inf.RunWithContext
	default:
		err = fmt.Errorf("unknown implementation %q", impl)
	}
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	r.stop = func() {
		cancel()
		<-done
	}
	b.Cleanup(r.stop) // in case the benchmark fails before it stops r
	return r
}

// useStack sets client-go's feature gates for stack for the rest of b: the
// classic stack needs InOrderInformers (locked on, which only the testing
// helper may override) and WatchListClient off; the default stack is the
// default gates. cachelab's informer is told its stack directly.
func useStack(b *testing.B, impl string, stack informer.Stack) {
	if impl == "client-go" && stack == informer.Classic {
		clientfeaturestesting.SetFeatureDuringTest(b, clientfeatures.InOrderInformers, false)
		clientfeaturestesting.SetFeatureDuringTest(b, clientfeatures.WatchListClient, false)
	}
	gates := clientfeatures.FeatureGates()
	wantOn := impl == "cachelab" || stack == informer.Default
	if gates.Enabled(clientfeatures.InOrderInformers) != wantOn || gates.Enabled(clientfeatures.WatchListClient) != wantOn {
		b.Fatalf("client-go gates for %s/%s: InOrderInformers=%v WatchListClient=%v", stack, impl,
			gates.Enabled(clientfeatures.InOrderInformers), gates.Enabled(clientfeatures.WatchListClient))
	}
}

func benchPodExample() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Pod")
	return u
}

// awaitClosed waits until ch is closed. Only the test binary's deadline
// bounds the wait (package testdeadline; a benchmark has none before go
// test's -timeout): a guard against a hang, not a timing assumption.
func awaitClosed(b *testing.B, ch <-chan struct{}, what string) {
	b.Helper()
	select {
	case <-ch:
	case <-testdeadline.Context(b).Done():
		b.Fatalf("no %s by the test binary's deadline", what)
	}
}

// ---- etcd ----

var quietOnce sync.Once

// setupBench silences client-go's logs, starts an embedded etcd for the
// benchmark, and checks when the benchmark ends that it and every informer
// stopped all their goroutines.
func setupBench(b *testing.B) *listwatch.Embedded {
	quietOnce.Do(difftest.Quiet)
	before := goleak.IgnoreCurrent()
	b.Cleanup(func() { goleak.VerifyNone(b, before) })
	e, err := listwatch.StartEmbedded(testdeadline.Context(b), listwatch.EmbeddedOptions{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := e.Close(); err != nil {
			b.Error(err)
		}
	})
	return e
}

// fillPods writes pods [from, to) straight into etcd as listwatch stores
// them (E1: the JSON without resourceVersion, at
// /registry/pods/<ns>/<name>), 100 to a transaction (etcd allows 128
// operations per transaction), from four goroutines at once. The Writer
// would read each key first, which is too slow for 100,000 pods.
func fillPods(b *testing.B, c *clientv3.Client, from, to int) {
	b.Helper()
	const perTxn = 100
	var next atomic.Int64
	next.Store(int64(from))
	inParallel(b, 4, func(int) error {
		for lo := next.Add(perTxn) - perTxn; lo < int64(to); lo = next.Add(perTxn) - perTxn {
			ops := make([]clientv3.Op, 0, perTxn)
			for i := int(lo); i < min(int(lo)+perTxn, to); i++ {
				ops = append(ops, clientv3.OpPut(benchPodKey(i), benchPodJSON(i, 0)))
			}
			if _, err := c.Txn(context.Background()).Then(ops...).Commit(); err != nil {
				return err
			}
		}
		return nil
	})
}

// inParallel runs work on that many goroutines and fails b with the first
// error any of them returns.
func inParallel(b *testing.B, workers int, work func(worker int) error) {
	b.Helper()
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { errs <- work(w) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
}

func benchPodKey(i int) string {
	return fmt.Sprintf("/registry/pods/ns-%d/pod-%06d", i%10, i)
}

// benchPodJSON is a small but plausible pod (about 400 bytes): labels, a
// container, a node, a phase. gen changes with every update.
func benchPodJSON(i, gen int) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-%06d","namespace":"ns-%d",`+
		`"uid":"00000000-0000-0000-0000-%012d","creationTimestamp":"2026-01-01T00:00:00Z",`+
		`"labels":{"app":"app-%d","gen":"%d"}},`+
		`"spec":{"nodeName":"node-%d","containers":[{"name":"app","image":"registry.k8s.io/pause:3.10",`+
		`"resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]},`+
		`"status":{"phase":"Running","podIP":"10.0.%d.%d"}}`,
		i, i%10, i, i%10, gen, i%100, i/256%256, i%256)
}

// compactEtcd discards etcd's history, so that one sub-benchmark's
// updates do not weigh on the next.
func compactEtcd(b *testing.B, e *listwatch.Embedded) {
	b.Helper()
	rev, err := e.Revision(context.Background())
	if err == nil {
		err = e.Compact(context.Background(), rev)
	}
	if err != nil {
		b.Fatal(err)
	}
}

// ---- latency bookkeeping ----

// rvStamp is when a resourceVersion was written (by a writer) or heard (by
// the handler).
type rvStamp struct {
	rv int64
	at time.Time
}

// writeBurst updates n pods (round-robin over the first eventPods) from
// eventWriters goroutines, one Put each, and returns when each write's
// reply arrived, by the revision etcd gave it.
func writeBurst(b *testing.B, c *clientv3.Client, n, gen int) []rvStamp {
	var next atomic.Int64
	out := make([][]rvStamp, eventWriters)
	inParallel(b, eventWriters, func(w int) error {
		for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
			resp, err := c.Put(context.Background(), benchPodKey(i%eventPods), benchPodJSON(i%eventPods, gen*n+i))
			if err != nil {
				return err
			}
			out[w] = append(out[w], rvStamp{resp.Header.Revision, time.Now()})
		}
		return nil
	})
	return slices.Concat(out...)
}

// updateRecorder is the handler's side: it stamps every OnUpdate and
// closes done once it has heard as many as it expects.
type updateRecorder struct {
	mu   sync.Mutex
	seen []rvStamp
	want int
	done chan struct{}
}

// expect arms the recorder for n more updates.
func (r *updateRecorder) expect(n int) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen, r.want, r.done = make([]rvStamp, 0, n), n, make(chan struct{})
	return r.done
}

func (r *updateRecorder) onUpdate(_, obj any) {
	at := time.Now()
	rv, _ := strconv.ParseInt(obj.(*unstructured.Unstructured).GetResourceVersion(), 10, 64)
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.seen) == r.want {
		return // not armed, or an update nobody wrote in this burst
	}
	r.seen = append(r.seen, rvStamp{rv, at})
	if len(r.seen) == r.want {
		close(r.done)
	}
}

// take returns what was heard and disarms the recorder.
func (r *updateRecorder) take() []rvStamp {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.seen
	r.seen, r.want = nil, 0
	return seen
}

// matchLatencies pairs each heard update with its write by resourceVersion.
func matchLatencies(b *testing.B, sent, seen []rvStamp) []time.Duration {
	at := make(map[int64]time.Time, len(sent))
	for _, s := range sent {
		at[s.rv] = s.at
	}
	out := make([]time.Duration, 0, len(seen))
	for _, s := range seen {
		w, ok := at[s.rv]
		if !ok {
			b.Fatalf("handler heard resourceVersion %d, which no writer wrote", s.rv)
		}
		out = append(out, s.at.Sub(w))
	}
	return out
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
