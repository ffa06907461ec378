package sim

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/cachelab/cachelab/internal/meter"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// The world's actions: writes to etcd, compaction, the informers' start,
// handlers, the clock, and what "show" prints.

// wrote notes a write and whether the informers' watches will see it: an
// object that matches the selectors before or after the write. It counts
// a create (before nil) for Session.Progress.
func (r *runner) wrote(before, after *unstructured.Unstructured) {
	if before == nil {
		r.created.Add(1)
	}
	if r.where.wrote(before, after) {
		return
	}
	// Unseen by each informer that runs whose selectors filter it out.
	for _, p := range r.livePairs() {
		unseen := !(p[0].cfg.matches(before) || p[0].cfg.matches(after))
		p[0].unseenWrite, p[1].unseenWrite = unseen, unseen
	}
}

func (r *runner) revision() (int64, error) { return r.where.revision() }

// cmdStart starts both informers (start), or both bare queues with their
// reflectors (start-queue, queue true).
func cmdStart(r *runner, a scenario.Args, queue bool) error {
	if r.cfg != nil && !r.stopped {
		return fmt.Errorf("the informers are already started; stop them first to start fresh ones")
	}
	cfg := r.scopeArgs(a)
	cfg.transform, _ = a.Value("transform")
	cfg.queue = queue
	if r.stopped {
		// Fresh informers, as a controller that restarts builds them: the
		// handlers start again with empty views, and every layer's
		// "what changed" starts from nothing.
		for _, s := range r.sides[:2] {
			s.fresh()
		}
		r.note(trace.LayerSim, "", "new informers replace the stopped ones, with the handlers registered before the stop")
	}
	cfg.res = r.resourceNamed(a.Resource)
	*r.sides[0].target = cfg.res // both sides' connections serve it from the first request
	jitter := newBackoffJitter() // fresh informers draw fresh sequences
	for _, s := range r.sides[:2] {
		s.jitter = jitter
		s.conn.StartInformer(cfg.labels, cfg.fields, cfg.namespace)
		if err := s.start(cfg, r.opts.Seed); err != nil {
			return err
		}
	}
	r.cfg, r.stopped, r.paused = &cfg, false, false
	if queue {
		return nil
	}
	return r.startWaitingControllers()
}

// scopeArgs is what start and factory share: the run's stack, and the
// resync period, selectors and namespace the command gives.
func (r *runner) scopeArgs(a scenario.Args) startConfig {
	cfg := startConfig{res: r.res, stack: r.stack()}
	if v, ok := a.Value("resync"); ok {
		cfg.resync, _ = time.ParseDuration(v)
	}
	cfg.labels, _ = a.Value("labels")
	cfg.fields, _ = a.Value("fields")
	cfg.namespace, _ = a.Value("namespace")
	if cfg.namespace != "" {
		cfg.namespace = r.where.namespace(cfg.namespace)
	}
	return cfg
}

// cmdStop stops both informers. They keep their indexers and HasSynced
// values (client-go's do), refuse new handlers, and a later start builds
// fresh ones.
func cmdStop(r *runner, a scenario.Args) error {
	if r.ctl.waits != nil {
		r.ctl.waits = nil
		r.note(trace.LayerSim, "", "the controllers waiting for the informers will not start")
	}
	// A controller's main that returns cancels its informers' context
	// and calls each factory's Shutdown: Start starts nothing after it
	// (I4), not even an informer asked for since.
	var shut []string
	for _, name := range slices.Sorted(maps.Keys(r.factories)) {
		if f := r.factories[name]; !f.shut[0] {
			shut = append(shut, name)
		}
	}
	defer func() {
		for _, name := range shut {
			r.factories[name].shutdown(trace.Cachelab)
			r.factories[name].shutdown(trace.ClientGo)
		}
		if len(shut) > 0 {
			r.note(trace.LayerSim, "", fmt.Sprintf("%s shut down: Start starts nothing from now on", plural(len(shut), "factory", "factories")+" "+strings.Join(shut, ", ")))
		}
	}()
	switch {
	case !slices.ContainsFunc(r.sides, func(s *side) bool { return s.running }):
		r.note(trace.LayerSim, "", "nothing to stop: the informers were never started")
		return nil
	case !slices.ContainsFunc(r.sides, r.live):
		r.note(trace.LayerSim, "", "nothing to stop: the informers are stopped already")
		return nil
	}
	var held []string
	if len(r.ctl.sides) > 0 {
		r.stopControllers()
		r.note(trace.LayerSim, "", "controllers stopped: their queues shut down, whatever waited in them dropped")
	}
	for _, s := range r.sides {
		// Both sides of an informer hold the same handlers: say them once.
		if let := s.stop(); s.impl == trace.ClientGo {
			held = append(held, let...)
		}
	}
	r.stopped = true
	r.noteLever(trace.LayerSim, trace.LeverStop, "informers stopped")
	if len(held) > 0 {
		r.note(trace.LayerSim, "", fmt.Sprintf("held handlers let go: %s; the calls still buffered for them are not shown "+
			"(which of them client-go still makes while it stops is chance: each listener picks at random between its closed input "+
			"and its next delivery)", strings.Join(held, ", ")))
	}
	return nil
}

func cmdAddHandler(r *runner, a scenario.Args) error {
	name := a.Pos[0]
	resync := time.Duration(-1)
	if v, ok := a.Value("resync"); ok {
		resync, _ = time.ParseDuration(v)
	}
	if r.handlerSides(name) != nil {
		return fmt.Errorf("a handler named %q is already registered", name)
	}
	pair := [2]*side{r.sides[0], r.sides[1]}
	if f, ok := a.Value("informer"); ok {
		var made bool
		if pair, made = r.ctlPair(f); !made {
			return fmt.Errorf("factory %s has no informer yet: ask for it first (informer %s)", f, f)
		}
	}
	for _, s := range pair {
		h := newHandler(name, resync, a.Flags["slow"], s.rec)
		if s.inf != nil {
			if err := s.addHandler(h); err != nil {
				if !r.stopped {
					return err
				}
				// Both informers refuse a handler once stopped; that is
				// what the scenario shows, not a failed run.
				s.rec.Record(trace.Event{Layer: h.layer(), Kind: trace.KindHandler, Handler: name, Detail: "not added: " + refusal(name, err)})
				continue
			}
		}
		s.handlers = append(s.handlers, h)
	}
	return nil
}

// handlerSides is the sides that have a handler named name (both sides
// of one informer), or nil.
func (r *runner) handlerSides(name string) []*side {
	var out []*side
	for _, s := range r.sides {
		if s.handlerNamed(name) != nil {
			out = append(out, s)
		}
	}
	return out
}

// refusal is an informer's AddEventHandler error with the handler's
// printed value (client-go formats it with %v, pointers and all) replaced
// by its name, so the line is the same on every run.
func refusal(name string, err error) string {
	msg := err.Error()
	const stopped = " was not added to shared informer because it has stopped already"
	if strings.HasPrefix(msg, "handler ") && strings.HasSuffix(msg, stopped) {
		return "handler " + name + stopped
	}
	return msg
}

func orNone(why string) string {
	if why == "" {
		return "every watch gets one"
	}
	return why
}

func (r *runner) setPaused(p bool) error {
	if !r.queueWorld() {
		return fmt.Errorf("pause and resume work on a queue started with start-queue: in a running informer, " +
			"processing holds the queue's lock, so pausing it would stop the reflector too (see the queue world in sim/queueworld.go)")
	}
	r.paused = p
	if p {
		r.note(trace.LayerSim, "", "processing paused: nobody pops the queue")
	} else {
		r.note(trace.LayerSim, "", "processing resumed: the queue is popped")
	}
	return nil
}

// show adds a show command's lines to a side's trace.
func (r *runner) show(s *side, a scenario.Args, sn snapshot) {
	add := func(text string) { s.rec.Add(trace.LayerShow, trace.KindShow, "", text) }
	switch a.Pos[0] {
	case "store":
		if s.inf == nil {
			add("(not started)")
			return
		}
		objs, _ := s.inf.indexer()
		lines := make([]string, 0, len(objs))
		for _, o := range objs {
			lines = append(lines, trace.DescribeLong(o))
		}
		sort.Strings(lines)
		add(fmt.Sprintf("%d %s; last synced rv %s", len(objs), plural(len(objs), "object", "objects"), sn.LastSyncRV))
		for _, l := range lines {
			add("  " + l)
		}
	case "metrics":
		r.showMetrics(s, add)
	case "workqueue":
		if len(s.ctls) == 0 {
			add("(no controller)")
			return
		}
		for _, c := range s.ctls {
			c.showWorkqueue(add)
		}
	case "synced":
		for _, n := range syncedNames(sn) {
			add(fmt.Sprintf("%s HasSynced=%t", n, sn.Synced[n]))
		}
		for _, h := range s.handlers {
			if _, shown := sn.Synced[h.name]; !shown && sn.HeldInitial[h.name] {
				add(h.name + " HasSynced not shown: held in an initial-list call, where client-go's classic stack races")
			}
		}
	case "handlers":
		for _, h := range s.handlers {
			if h.removed {
				continue
			}
			state := ""
			if h.slow() {
				state = ", slow (held)"
			}
			add(fmt.Sprintf("%s: %d calls%s", h.name, h.callCount(), state))
		}
	case "requests":
		if s.conn == nil {
			add("(not started)")
			return
		}
		for _, q := range s.conn.Requests() {
			add(q)
		}
	case "queue":
		// Only cachelab's queue can be seen: the line goes in a layer
		// that is cachelab's own and not compared.
		if s.inf == nil {
			return
		}
		if q, ok := s.inf.(queueOps); ok {
			if n, ok := q.queued(); ok {
				s.rec.Add(trace.LayerQueue, trace.KindQueue, "", fmt.Sprintf("%d items waiting", n))
			}
			return
		}
		if b, ok := s.inf.backlog(); ok {
			keys := make([]string, 0, len(b.Handlers))
			for k := range b.Handlers {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			parts := []string{fmt.Sprintf("queue: %d unfinished", b.Queued)}
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s: %d pending", k, b.Handlers[k]))
			}
			s.rec.Add(trace.LayerQueue, trace.KindQueue, "", strings.Join(parts, "; "))
		}
	}
}

// showMetrics prints what a scrape of the informer's metrics would read
// (P20, R8, S6). Each side's informer is named, so both publish; what
// either would show by chance is left out, with the reason.
func (r *runner) showMetrics(s *side, add func(string)) {
	if s.inf == nil {
		add("(not started)")
		return
	}
	_, queueWorld := s.inf.(queueOps)
	if !s.meter.Made(meter.QueuedItems) {
		add("queued items: not published (client-go's DeltaFIFO has no metrics)")
	} else if v, ok := s.meter.Value(meter.QueuedItems); ok {
		add("queued items " + strconv.FormatFloat(v, 'f', -1, 64))
	} else {
		add("queued items: not set yet")
	}
	if queueWorld {
		// The simulator pops one delta at a time, so every pop is timed
		// once. The times differ: cachelab's on the scenario clock,
		// client-go's on the real one.
		if s.meter.Made(meter.ProcessingLatency) {
			n := s.meter.Observations(meter.ProcessingLatency)
			add(fmt.Sprintf("processing latency: %d %s timed", n, plural(n, "pop", "pops")))
		}
		add("store resourceVersion: none (the queue world pops into the simulator's own map)")
		return
	}
	switch v, ok := s.meter.Value(meter.StoreRV); {
	case s.classic:
		add("store resourceVersion: not shown (in the classic stack it is the last written object's, in map order after a resync)")
	case ok:
		add("store resourceVersion " + strconv.FormatFloat(v, 'f', -1, 64))
	default:
		add("store resourceVersion: not set yet")
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// etcdChanged notes that the step changed what etcd holds (a write, a
// compaction, other data after a restore or a wipe): a retry held because
// it would fail the same way again (world.Conn.EtcdChanged) may now get
// another answer, and goes through when the step settles (letHeldGo).
// Not at once: a command that writes twice (delete ns0/a ns0/b) would
// let a retry through between its writes on one side and after them on
// the other, by the scheduler's say (issue 27, case 4).
func (r *runner) etcdChanged() { r.heldMayGo = true }

// letHeldGo lets the retries held until etcd changed go through, once for
// all the changes a step (or a controller's round) made.
func (r *runner) letHeldGo() {
	if !r.heldMayGo {
		return
	}
	r.heldMayGo = false
	for _, s := range r.sides {
		if s.conn != nil {
			s.conn.EtcdChanged()
		}
	}
}

// updateLabel is the label update times=n counts in.
const updateLabel = "update"

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
