package sim

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/store"
)

// controllerRun is the scenario's controllers: one per side of its
// informer for each start-controller that ran, the reconcile script for
// every key, and the writes of the round in progress with etcd's
// revision before it.
type controllerRun struct {
	sides       []*ctlSide
	waits       []ctlConfig // start-controllers before their informers ran: each starts with its informer
	script      map[string][]outcome
	roundWrites []ctlWrite
	roundRev    int64
}

// A controller on each side (start-controller): the loop of controller/
// on cachelab's informer and workqueue, and internal/cgloop's, the same
// loop on client-go's informer and util/workqueue (ctlloops.go), each
// reconciling keys by one script (the reconcile-* levers), compared after
// every step in two layers, workqueue and reconcile.
//
// A real controller's workers run whenever a key is ready. Here they run
// in rounds, at the end of each step, once both informers have settled:
//
//	settle ─▶ flush due delays ─▶ hand the held handler calls on
//	   ▲                              (add / coalesce lines)
//	   │                                               ▼
//	apply the round's writes ◀── each side: up to <workers> keys,
//	  (etcd, then settle)          ProcessNextWorkItem each
//
// until no key is ready on either side. Three rules keep that
// deterministic; the first two pin choices client-go leaves free, and the
// third follows from them:
//
//   - The handler calls are held (heldCalls) and handed on at the round,
//     with each batch client-go makes in map order (an initial list, a
//     resync, a relist's tombstones) sorted by key, as the trace compares
//     those batches. So both queues get their keys in one order, an order
//     client-go's informer could have delivered.
//   - A reconcile's write to etcd is decided when the reconcile makes it
//     (conflict, not found, or the resourceVersion it will get) and
//     carried out once, for both sides, when the round ends: neither
//     informer sees a write before both controllers have read their
//     caches. The writes of a round go to etcd in the order cachelab's
//     controller made them; client-go's must be the same writes.
//   - No event arrives during a round, so a key is never added while a
//     worker holds it, and a round of n workers is the same as n calls
//     of ProcessNextWorkItem one after the other.
//
// Within an advance, time stops at each moment a key's delay ends (the
// earliest in cachelab's queue), so a key backing off 5ms, 10ms, 20ms is
// reconciled at each of those times, not once at the end.

// ctlConfig is what start-controller asked for.
type ctlConfig struct {
	name       string // "" for the run's one controller; else each controller's name (name=)
	informer   string // the factory whose informer it is on (informer=), "" for start's
	workers    int
	guard      bool // the staleness guard (K7, K8)
	writes     bool // the reconcile writes status back to etcd
	skipForget bool // the bug: success does not Forget
}

// outcome is one scripted reconcile result (reconcile-fail,
// reconcile-requeue): an error, a requeue-after, or both.
type outcome struct {
	fail  bool
	after time.Duration
}

// ctlHandlerName stands for the controller's handler in a snapshot's
// handler call counts: settling holds client-go to cachelab's count. A
// scenario's handler names cannot contain its parentheses.
const ctlHandlerName = "(controller)"

// maxRestless bounds how often one key may be reconciled in one call of
// reconcileAll (the rounds after a step, or at one moment of an
// advance), where the scenario's clock does not move. A key comes back
// then only when an event queues it again; a reconcile that writes every
// time makes its own event, and never lets its key rest. Every other way
// back (a failure's backoff, a requeue-after) waits for the clock, so
// this counts the only loop the rounds could not leave, whatever the
// number of keys or workers.
const maxRestless = 100

// ctlLoop is one implementation's controller, stepped by the runner.
type ctlLoop interface {
	// handler is the controller's own event handler, where held calls
	// are handed on.
	handler() eventHandler
	// ready is the number of keys a worker could take now (Len).
	ready() int
	// process is one ProcessNextWorkItem; ready() must be above 0.
	process(ctx context.Context)
	// flush makes the keys whose delay has passed ready: next is how
	// long until the next one is due, if one waits (cachelab's only;
	// client-go's queue does not tell).
	flush() (next time.Duration, waiting bool, err error)
	numRequeues(key string) int
	// lookup reads the key from the informer's cache, as a Lister does.
	lookup(key string) (obj any, exists bool, err error)
	shutdown()
}

// eventHandler is the method set client-go's and cachelab's handlers
// share.
type eventHandler interface {
	OnAdd(obj any, isInInitialList bool)
	OnUpdate(oldObj, newObj any)
	OnDelete(obj any)
}

// ctlSide is one side's controller and what the trace needs to know.
type ctlSide struct {
	name string // the controller's name, "" for an unnamed one
	impl string
	rec  *trace.Recorder
	r    *runner
	cfg  ctlConfig
	held *heldCalls
	loop ctlLoop

	script map[string][]outcome // key -> its next outcomes, in order
	seen   map[string]bool      // keys ever queued, for show workqueue
	read   map[string]string    // key -> what its reconcile read
	// enqueued is the Enqueue the controller's handler reported during
	// the handed-on call, to write its line once the queue's length
	// says whether it coalesced.
	enqueued *controller.Event

	// The keys taken this round, and how often each was taken in this
	// call of reconcileAll (restless).
	reconciledRound []string
	taken           map[string]int
}

func newCtlSide(r *runner, s *side, cfg ctlConfig) *ctlSide {
	return &ctlSide{name: cfg.name, impl: s.impl, rec: s.rec, r: r, cfg: cfg, held: &heldCalls{}, script: map[string][]outcome{},
		seen: map[string]bool{}, read: map[string]string{}}
}

// event turns a step of the loop, as the implementation reported it,
// into a trace line.
func (c *ctlSide) event(e controller.Event) {
	wq := func(op, detail string) {
		c.record(trace.Event{Layer: trace.LayerWorkqueue, Kind: trace.KindWorkqueue, Op: op, Key: e.Key, Detail: detail})
	}
	switch e.Kind {
	case controller.Enqueue, controller.Unkeyable:
		c.enqueued = &e
	case controller.Get:
		c.reconciledRound = append(c.reconciledRound, e.Key)
		wq("get", e.Key)
	case controller.RateLimited:
		wq("requeue", fmt.Sprintf("%s in %v (rate-limited)", e.Key, e.Delay))
	case controller.AddAfter:
		wq("after", fmt.Sprintf("%s in %v (requeue-after)", e.Key, e.Delay))
	case controller.Forget:
		wq("forget", e.Key)
	case controller.Done:
		wq("done", e.Key)
	case controller.Stale:
		c.record(trace.Event{Layer: trace.LayerReconcile, Kind: trace.KindReconcile, Op: "stale", Key: e.Key,
			Detail: fmt.Sprintf("%s: not reconciled, the cache is older than our last write (%s)", e.Key, e.Detail)})
	case controller.Reconciled:
		c.record(trace.Event{Layer: trace.LayerReconcile, Kind: trace.KindReconcile, Op: "reconcile", Key: e.Key,
			Detail: fmt.Sprintf("%s: %s -> %s", e.Key, c.read[e.Key], describeResult(e.Result, e.Err))})
	}
}

// record records one of the controller's lines, named by the controller
// when it has a name (Event.Handler).
func (c *ctlSide) record(e trace.Event) {
	e.Handler = c.name
	c.rec.Record(e)
}

// handlerName stands for the controller's handler in a snapshot's call
// counts.
func (c *ctlSide) handlerName() string {
	if c.name == "" {
		return ctlHandlerName
	}
	return "(controller " + c.name + ")"
}

// describeResult says what a reconcile returned, in trace words.
func describeResult(res controller.Result, err error) string {
	var parts []string
	if res.Wrote != "" {
		parts = append(parts, "wrote rv "+res.Wrote)
	}
	switch {
	case err != nil && res.RequeueAfter > 0:
		parts = append(parts, fmt.Sprintf("error: %v; and requeue-after %v, which the error overrides", err, res.RequeueAfter))
	case err != nil:
		parts = append(parts, fmt.Sprintf("error: %v", err))
	case res.RequeueAfter > 0:
		parts = append(parts, fmt.Sprintf("ok, requeue-after %v", res.RequeueAfter))
	default:
		parts = append(parts, "ok")
	}
	return strings.Join(parts, ", ")
}

// release hands the held handler calls on to the controller's handler,
// writing an add or coalesce line for each key it queues.
func (c *ctlSide) release() {
	// The objects a watch-list brought as its initial events in the step
	// so far: client-go replays them from the reflector's temporary
	// store, in map order (trace.MarkListed).
	for _, call := range c.held.take(c.rec.Listed) {
		before := c.loop.ready()
		c.enqueued = nil
		h := c.loop.handler()
		switch call.op {
		case "add":
			h.OnAdd(call.obj, call.initial)
		case "update":
			h.OnUpdate(call.old, call.obj)
		case "delete":
			h.OnDelete(call.obj)
		}
		e := c.enqueued
		if e == nil {
			continue
		}
		ev := trace.Event{Layer: trace.LayerWorkqueue, Kind: trace.KindWorkqueue, Op: "add", Key: e.Key,
			Detail: fmt.Sprintf("%s (%s)", e.Key, e.Detail)}
		switch {
		case e.Kind == controller.Unkeyable:
			ev.Op, ev.Detail = "drop", "an object without a key ("+e.Detail+")"
		case c.loop.ready() == before:
			ev.Op, ev.Detail = "coalesce", ev.Detail+": already queued"
		}
		c.seen[e.Key] = true
		c.record(ev)
	}
}

// reconcile is the reconcile both sides run: read the key from the
// cache, take the script's next outcome for it, and (start-controller
// writes) bring the object's observed-image annotation up to date.
func (c *ctlSide) reconcile(key string) (controller.Result, error) {
	obj, exists, err := c.loop.lookup(key)
	switch {
	case err != nil:
		c.read[key] = "lister error"
		return controller.Result{}, err
	case !exists:
		c.read[key] = "not in the cache (deleted)"
	default:
		c.read[key] = "read " + describeObserved(obj, c.cfg.writes)
	}
	var res controller.Result
	if next := c.script[key]; len(next) > 0 {
		o := next[0]
		c.script[key] = next[1:]
		res.RequeueAfter = o.after
		if o.fail {
			return res, fmt.Errorf("scripted failure")
		}
	}
	if !c.cfg.writes || !exists {
		return res, nil
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return res, fmt.Errorf("the cache holds a %T, not an object", obj)
	}
	image, _, _ := unstructured.NestedString(u.Object, "spec", "image")
	if c.r.opts.ctlRestless {
		image += " at rv " + u.GetResourceVersion()
	}
	if u.GetAnnotations()[scenario.ObservedAnnotation] == image {
		return res, nil // up to date: level-triggered, nothing to write
	}
	rv, err := c.r.ctlWrite(c.impl, u, image)
	if err != nil {
		return res, err
	}
	res.Wrote = rv
	return res, nil
}

// describeObserved names an object with its image and, for a writing
// controller, the image it last recorded: the two fields it compares.
func describeObserved(obj any, writes bool) string {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return trace.Describe(obj)
	}
	image, _, _ := unstructured.NestedString(u.Object, "spec", "image")
	observed := u.GetAnnotations()[scenario.ObservedAnnotation]
	switch {
	case writes:
		return fmt.Sprintf("%s (image %s, observed %s)", trace.Describe(obj), orDash(image), orDash(observed))
	case image != "":
		return fmt.Sprintf("%s (image %s)", trace.Describe(obj), image)
	}
	return trace.Describe(obj)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// heldCalls holds the controller's handler calls until the round.
type heldCalls struct {
	mu    sync.Mutex
	calls []heldCall
	count int // calls ever held: settling holds client-go to cachelab's
}

type heldCall struct {
	op       string // add, update, delete
	old, obj any
	initial  bool
}

func (h *heldCalls) hold(c heldCall) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
	h.count++
}

func (h *heldCalls) OnAdd(obj any, isInInitialList bool) {
	h.hold(heldCall{op: "add", obj: obj, initial: isInInitialList})
}
func (h *heldCalls) OnUpdate(oldObj, newObj any) {
	h.hold(heldCall{op: "update", old: oldObj, obj: newObj})
}
func (h *heldCalls) OnDelete(obj any) { h.hold(heldCall{op: "delete", obj: obj}) }

func (h *heldCalls) calledTimes() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}

// take returns the held calls and forgets them, each run of a batch that
// client-go makes in map order sorted by key (trace.Canonical's rule): an
// initial list's adds, a watch-list's objects (listed, by key@rv:
// replayed in map order whether they changed or not), a resync's
// unchanged objects, a relist's tombstones.
func (h *heldCalls) take(listed func(keyAtRV string) bool) []heldCall {
	h.mu.Lock()
	calls := h.calls
	h.calls = nil
	h.mu.Unlock()
	batch := func(c heldCall) trace.Order {
		switch {
		case c.op == "add" && c.initial:
			return trace.OrderInitialList
		case c.op != "delete" && listed(trace.KeyOf(c.obj)+"@"+rvOf(c.obj)):
			return trace.OrderListed
		case c.op == "update" && trace.Describe(c.old) == trace.Describe(c.obj) && uidOf(c.old) == uidOf(c.obj):
			return trace.OrderSameObject
		case c.op == "delete" && isTombstone(c.obj):
			return trace.OrderTombstones
		}
		return ""
	}
	for i := 0; i < len(calls); {
		j := i + 1
		if b := batch(calls[i]); b != "" {
			for j < len(calls) && batch(calls[j]) == b {
				j++
			}
			sort.SliceStable(calls[i:j], func(x, y int) bool {
				return trace.KeyOf(calls[i+x].obj) < trace.KeyOf(calls[i+y].obj)
			})
		}
		i = j
	}
	return calls
}

// isTombstone reports whether obj stands for a delete the informer only
// inferred at a relist.
func isTombstone(obj any) bool {
	switch obj.(type) {
	case store.DeletedFinalStateUnknown, cache.DeletedFinalStateUnknown:
		return true
	}
	return false
}

// --- the runner's side ---

// ctlWrite is one write a round's reconciles asked for, decided when
// asked, carried out when the round ends.
type ctlWrite struct {
	key, pre, image string // the object, the resourceVersion read, the image to record
	obj             *unstructured.Unstructured
	rv              string // the resourceVersion it will get
	err             error  // or why it fails
}

// ctlWrite decides a reconcile's write of u (as its cache had it),
// recording image as observed. cachelab's controller reconciles first;
// client-go's is given the decision for the same write, and an error if
// cachelab's made no such write.
func (r *runner) ctlWrite(impl string, u *unstructured.Unstructured, image string) (string, error) {
	key := trace.KeyOf(u)
	if impl == trace.ClientGo {
		for _, w := range r.ctl.roundWrites {
			if w.key == key && w.pre == u.GetResourceVersion() && w.image == image {
				return w.rv, w.err
			}
		}
		return "", fmt.Errorf("a write cachelab's controller did not make (%s at rv %s)", key, u.GetResourceVersion())
	}
	next := u.DeepCopy()
	ann := next.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[scenario.ObservedAnnotation] = image
	next.SetAnnotations(ann)
	w := ctlWrite{key: key, pre: u.GetResourceVersion(), image: image, obj: next}
	cur, err := r.podsWriter().Get(r.ctx, u.GetNamespace(), u.GetName())
	switch {
	case err != nil:
		w.err = err // not found: deleted since the cache saw it
	case cur.GetResourceVersion() != w.pre:
		w.err = r.podsWriter().ConflictError(u.GetName())
	default:
		w.rv = fmt.Sprint(r.ctl.roundRev + 1 + int64(r.roundWritten()))
	}
	r.ctl.roundWrites = append(r.ctl.roundWrites, w)
	return w.rv, w.err
}

func (r *runner) roundWritten() int {
	n := 0
	for _, w := range r.ctl.roundWrites {
		if w.err == nil {
			n++
		}
	}
	return n
}

// applyWrites carries out the round's successful writes, in order, and
// checks each got the resourceVersion decided for it.
func (r *runner) applyWrites() (bool, error) {
	wrote := false
	for _, w := range r.ctl.roundWrites {
		if w.err != nil {
			continue
		}
		before, err := r.podsWriter().Get(r.ctx, w.obj.GetNamespace(), w.obj.GetName())
		if err != nil {
			return wrote, err
		}
		out, err := r.podsWriter().Update(r.ctx, w.obj)
		if err != nil {
			return wrote, fmt.Errorf("the controller's write of %s at rv %s: %w", w.key, w.pre, err)
		}
		if out.GetResourceVersion() != w.rv {
			return wrote, fmt.Errorf("the controller's write of %s got rv %s where the simulator decided %s", w.key, out.GetResourceVersion(), w.rv)
		}
		wrote = true
		r.wrote(before, out)
		r.etcdChanged()
		r.noteWrite("update", out, w.pre, fmt.Sprintf("update %s -> %s (the controller: %s=%s)", trace.Describe(before), trace.Describe(out), scenario.ObservedAnnotation, w.image))
	}
	r.ctl.roundWrites = nil
	return wrote, nil
}

// reconcileAll runs the controllers' rounds until no key is ready on
// either side (see the top of this file). A round takes up to <workers>
// keys on each side, so the number of rounds grows with the keys: it is
// bounded by the keys and what they do, not by a budget. Only a key that
// keeps coming back without the clock moving is an error (maxRestless).
func (r *runner) reconcileAll() error {
	if len(r.ctl.sides) == 0 || r.stopped {
		return nil
	}
	for _, c := range r.ctl.sides {
		c.taken = map[string]int{}
	}
	for {
		busy := false
		for _, c := range r.ctl.sides {
			// Keys whose delay has passed first: client-go's delaying
			// loop queues them as the clock moves, before any held call
			// is handed on, so cachelab's must be queued first too.
			if _, _, err := c.loop.flush(); err != nil {
				return err
			}
			c.release()
			busy = busy || c.loop.ready() > 0
		}
		if !busy {
			return nil
		}
		rev, err := r.revision()
		if err != nil {
			return err
		}
		r.ctl.roundRev, r.ctl.roundWrites = rev, nil
		for _, c := range r.ctl.sides {
			for i := 0; i < c.cfg.workers && c.loop.ready() > 0; i++ {
				c.loop.process(r.ctx)
			}
		}
		if err := r.restless(); err != nil {
			return err
		}
		wrote, err := r.applyWrites()
		if err != nil {
			return err
		}
		if wrote {
			if err := r.settle(); err != nil {
				return err
			}
		}
	}
}

// restless is the error for a key reconciled maxRestless times in this
// call of reconcileAll (cachelab's controllers count; client-go's
// reconcile the same keys or diverge).
func (r *runner) restless() error {
	for _, c := range r.ctl.sides {
		if c.impl != trace.Cachelab {
			continue
		}
		for _, key := range c.reconciledRound {
			c.taken[key]++
			if n := c.taken[key]; n >= maxRestless {
				return fmt.Errorf("the controllers reconciled %s %d times at %v, each time ready again at once: "+
					"a reconcile that writes every time never lets its key rest", key, n, r.clock.Since(epoch))
			}
		}
	}
	for _, c := range r.ctl.sides {
		c.reconciledRound = c.reconciledRound[:0]
	}
	return nil
}

// ctlDue is how long until the controllers' next delayed key is due, if
// one waits (cachelab's queues tell, flushing what is due already;
// client-go's must agree).
func (r *runner) ctlDue() (time.Duration, bool) {
	if len(r.ctl.sides) == 0 || r.stopped {
		return 0, false
	}
	var due time.Duration
	waiting := false
	for _, c := range r.ctl.sides {
		if c.impl != trace.Cachelab {
			continue
		}
		next, ok, err := c.loop.flush()
		if err != nil || !ok {
			continue
		}
		if !waiting || next < due {
			due, waiting = next, true
		}
	}
	return due, waiting
}

// startControllers builds a controller on each side of one informer (a
// pair), running. The keys the informers already hold are queued at the
// step's round, as a late handler's catch-up.
func (r *runner) startControllers(cfg ctlConfig, pair [2]*side) error {
	for _, s := range pair {
		c := newCtlSide(r, s, cfg)
		for k, o := range r.ctl.script {
			c.script[k] = slices.Clone(o)
		}
		var err error
		s.do(func() {
			switch inf := s.inf.(type) {
			case cachelabInformer:
				c.loop, err = newCachelabCtl(r.ctx, c, inf, r.clock, r.opts.ctlPlant)
			case clientGoInformer:
				c.loop, err = newClientGoCtl(c, inf, r.clock, r.opts.SettleTimeout)
			default:
				err = fmt.Errorf("start-controller needs informers started with start (the queue world has none)")
			}
		})
		if err != nil {
			return err
		}
		r.ctl.sides = append(r.ctl.sides, c)
		s.ctls = append(s.ctls, c)
	}
	on := "each informer"
	if l := pair[0].rec.Informer; l != "" {
		on = "each side's " + l
	}
	who := "a controller"
	if cfg.name != "" {
		who = "controller " + cfg.name
	}
	r.note(trace.LayerSim, "", fmt.Sprintf("%s on %s: %s", who, on, describeCtlConfig(cfg)))
	return nil
}

func describeCtlConfig(cfg ctlConfig) string {
	s := fmt.Sprintf("%d worker", cfg.workers)
	if cfg.workers != 1 {
		s += "s"
	}
	if cfg.writes {
		s += "; each reconcile records spec.image in the annotation " + scenario.ObservedAnnotation + " when it differs"
	} else {
		s += "; reconciles read the cache and write nothing"
	}
	if cfg.guard {
		s += "; the staleness guard is on"
	}
	if cfg.skipForget {
		s += "; success does not call Forget (the bug)"
	}
	return s
}

// startWaitingControllers starts the controllers a start-controller
// asked for before their informers ran, on those that run now.
func (r *runner) startWaitingControllers() error {
	var still []ctlConfig
	for _, cfg := range r.ctl.waits {
		pair, ok := r.ctlPair(cfg.informer)
		if !ok || !r.live(pair[0]) {
			still = append(still, cfg)
			continue
		}
		if err := r.startControllers(cfg, pair); err != nil {
			return err
		}
	}
	r.ctl.waits = still
	return nil
}

// factoryOf is the factory an informer= names.
func factoryOf(ref string) string { f, _ := scenario.InformerRef(ref); return f }

// ctlPair is the informer a controller asked for: start's, or a
// factory's, if the factory has made it.
func (r *runner) ctlPair(factory string) ([2]*side, bool) {
	if factory == "" {
		return [2]*side{r.sides[0], r.sides[1]}, true
	}
	name, resource := scenario.InformerRef(factory)
	f := r.factories[name]
	if f == nil || f.informer(resource) == nil {
		return [2]*side{}, false
	}
	return f.informer(resource).sides, true
}

// stopControllers shuts every controller's queue down.
func (r *runner) stopControllers() {
	for _, c := range r.ctl.sides {
		c.loop.shutdown()
	}
	for _, s := range r.sides {
		s.ctls = nil
	}
	r.ctl.sides = nil
}

// scriptOutcome adds n outcomes to key's script on both sides, and for
// controllers started later.
func (r *runner) scriptOutcome(key string, o outcome, n int) {
	for range n {
		if r.ctl.script == nil {
			r.ctl.script = map[string][]outcome{}
		}
		r.ctl.script[key] = append(r.ctl.script[key], o)
		for _, c := range r.ctl.sides {
			c.script[key] = append(c.script[key], o)
		}
	}
}

// showWorkqueue prints what both queues can say: how many keys are
// ready, and each known key's requeue count.
func (c *ctlSide) showWorkqueue(add func(string)) {
	add(fmt.Sprintf("%d keys ready", c.loop.ready()))
	keys := make([]string, 0, len(c.seen))
	for k := range c.seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		add(fmt.Sprintf("  %s NumRequeues=%d", k, c.loop.numRequeues(k)))
	}
}

// cmdStartController is start-controller.
func cmdStartController(r *runner, a scenario.Args) error {
	cfg := ctlConfig{workers: 1, writes: a.Flags["writes"], guard: a.Flags["guard"], skipForget: a.Flags["skip-forget"]}
	if v, ok := a.Value("workers"); ok {
		cfg.workers, _ = strconv.Atoi(v)
	}
	cfg.name, _ = a.Value("name")
	cfg.informer, _ = a.Value("informer")
	for _, c := range append(r.ctl.sides, r.waitingCtls()...) {
		switch {
		case c.name == cfg.name && cfg.name == "":
			return fmt.Errorf("start-controller: the controllers are there already (give each a name= to start several)")
		case c.name == cfg.name:
			return fmt.Errorf("start-controller: a controller named %q is there already", cfg.name)
		case c.name == "" || cfg.name == "":
			return fmt.Errorf("start-controller: with several controllers, each needs a name=")
		case c.cfg.writes && cfg.writes:
			return fmt.Errorf("start-controller: controller %q writes already; only one controller may write (two writing the same annotation would conflict with each other)", c.name)
		}
	}
	pair, made := r.ctlPair(cfg.informer)
	switch {
	case cfg.informer != "" && r.factories[factoryOf(cfg.informer)] == nil:
		return fmt.Errorf("start-controller: no factory named %q (make it with factory %s)", factoryOf(cfg.informer), factoryOf(cfg.informer))
	case cfg.informer == "" && r.queueWorld() && !r.stopped:
		return fmt.Errorf("start-controller needs informers (start); start-queue's bare queues have no handlers")
	case !made || !r.live(pair[0]):
		// As a controller's main registers its handlers before it starts
		// its informers: the controllers start with them.
		r.ctl.waits = append(r.ctl.waits, cfg)
		what := "the controllers start with the informers"
		if cfg.informer != "" {
			what = fmt.Sprintf("the controller starts when factory %s's Start runs its informer", cfg.informer)
			if cfg.name != "" {
				what = fmt.Sprintf("controller %s starts when factory %s's Start runs its informer", cfg.name, cfg.informer)
			}
		}
		r.note(trace.LayerSim, "", what+" ("+describeCtlConfig(cfg)+")")
		return nil
	}
	return r.startControllers(cfg, pair)
}

// waitingCtls is the controllers waiting for their informers, as
// ctlSides for cmdStartController's checks.
func (r *runner) waitingCtls() []*ctlSide {
	var out []*ctlSide
	for _, cfg := range r.ctl.waits {
		out = append(out, &ctlSide{name: cfg.name, cfg: cfg})
	}
	return out
}

// cmdScript is reconcile-fail (fail) and reconcile-requeue.
func cmdScript(r *runner, a scenario.Args, fail bool) error {
	n := 1
	if v, ok := a.Value("times"); ok {
		n, _ = strconv.Atoi(v)
	}
	o := outcome{fail: fail}
	for _, k := range []string{"after", "requeue-after"} {
		if v, ok := a.Value(k); ok {
			o.after, _ = time.ParseDuration(v)
		}
	}
	r.scriptOutcome(a.Pos[0], o, n)
	what := "succeed, asking to be requeued after " + o.after.String()
	if fail {
		what = "fail"
		if o.after > 0 {
			what += " and ask to be requeued after " + o.after.String()
		}
	}
	times := "reconcile"
	if n > 1 {
		times = fmt.Sprintf("%d reconciles", n)
	}
	r.note(trace.LayerSim, a.Pos[0], fmt.Sprintf("the next %s of %s will %s", times, a.Pos[0], what))
	return nil
}
