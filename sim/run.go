package sim

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/listwatch"
)

// Options configures a run.
type Options struct {
	// Stack, if set, overrides the stack the scenario's start asks for.
	Stack informer.Stack
	// Seed seeds cachelab's randomness (backoff jitter, watch timeouts).
	Seed uint64
	// Etcd, if it has endpoints, is an external etcd to run on instead of
	// the embedded one. The run writes under its own prefix and removes
	// what it wrote.
	Etcd listwatch.ClientOptions
	// SettleTimeout bounds how long a side may go without progress while
	// a step settles (10s if 0): a new trace line, a change in its
	// connection's state or a relist backoff in progress restarts it.
	SettleTimeout time.Duration
	// OnStep, if set, hears each step's result as soon as it is known;
	// returning false stops the run.
	OnStep func(StepResult) bool

	// tamper, in tests only, alters cachelab's recorded lines.
	tamper func(*entry)
	// lateTimers, in tests only, makes each side's clock wait this long
	// (real time) before it makes a timer, and before it hands on a
	// timer's tick: a reflector's goroutine that a busy machine runs
	// late.
	lateTimers time.Duration
}

// Line is one line of a trace.
type Line struct {
	Layer string `json:"layer"`
	Key   string `json:"key,omitempty"`
	Text  string `json:"text"`
}

// StepResult is what one step printed, per implementation, and whether
// they agreed.
type StepResult struct {
	Index int    `json:"step"`
	Pos   string `json:"pos"`
	Cmd   string `json:"cmd"`
	// World is what the step did to etcd and the connection.
	World []Line `json:"world,omitempty"`
	// Sides holds each implementation's trace lines ("cachelab",
	// "client-go").
	Sides map[string][]Line `json:"sides"`
	// Divergence is the first difference between them, if any.
	Divergence *Divergence `json:"divergence,omitempty"`
}

// Divergence is where client-go and cachelab first differed.
type Divergence struct {
	Step  int    `json:"step"`
	Pos   string `json:"pos"`
	Cmd   string `json:"cmd"`
	Layer string `json:"layer"`
	// Diff is go-cmp's diff, -cachelab +client-go.
	Diff string `json:"diff"`
}

func (d *Divergence) Error() string {
	return fmt.Sprintf("%s: step %d (%s): cachelab and client-go differ in layer %q (-cachelab +client-go):\n%s", d.Pos, d.Step, d.Cmd, d.Layer, d.Diff)
}

// Result is a whole run.
type Result struct {
	Header Header       `json:"header"`
	Steps  []StepResult `json:"steps"`
	// Divergence is the first divergence; the run stopped there.
	Divergence *Divergence `json:"divergence,omitempty"`
}

// runner runs one scenario: one etcd, a writer, a fake clock, and the two
// sides.
type runner struct {
	claimed bool // it holds the process's client-go settings (claimProcess)
	sc      *Scenario
	opts    Options
	ctx     context.Context
	etcd    *listwatch.Embedded // nil with an external etcd
	client  *clientv3.Client    // the world's own connection: writes, compaction
	res     listwatch.Resource
	writer  *listwatch.Writer
	clock   *clocktesting.FakeClock
	sides   []*side // cachelab, client-go
	clients []*clientv3.Client
	cfg     *startConfig // set by start
	world   []Line       // the current step's world lines
	uids    int
	// uidOf is the UID each key was last created with, so that a create
	// under a name that had another object says so.
	uidOf   map[string]string
	paused  bool
	stopped bool // stop ran: the informers keep their state and run no more
	classic bool // the run's stack is the classic one
	// unseenWrite is set when the newest write is one the informers'
	// selectors filter out: no event will tell them etcd's revision, so
	// settling asks etcd for a progress notification (a bookmark). It
	// stays set until both informers have reached etcd's revision, if
	// need be after a disconnect, a failed request or a stop.
	unseenWrite bool
	// mapOrder is the current step's command's: its lines come in map
	// order on some side (command.mapOrder).
	mapOrder bool
}

// epoch is the fake clock's start: every run's timestamps are the same.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Run runs sc: both implementations over one etcd, step by step, settling
// and comparing after each step. It returns at the first divergence (in
// Result.Divergence) or at the end. An error means the run itself could
// not go on (etcd did not start, a step could not be carried out).
func Run(ctx context.Context, sc *Scenario, opts Options) (*Result, error) {
	ses, err := Open(ctx, sc, opts)
	if err != nil {
		return nil, err
	}
	defer ses.Close()
	res := &Result{Header: ses.Header()}
	for _, st := range sc.Steps {
		sr, err := ses.Step(st)
		if err != nil {
			return res, err
		}
		res.Steps = append(res.Steps, sr)
		if opts.OnStep != nil && !opts.OnStep(sr) {
			return res, nil
		}
		if sr.Divergence != nil {
			res.Divergence = sr.Divergence
			return res, nil
		}
	}
	res.Divergence = ses.Finish()
	return res, nil
}

// The process-wide settings client-go reads: its feature gates, which
// select the stack, and klog's logger. Runs may overlap (FuzzRunner runs
// two at once) only in the same stack.
var process struct {
	sync.Mutex
	stack informer.Stack
	runs  int
	klog  sync.Once
}

// claimProcess sets client-go's feature gates for st, unless runs in st
// hold them already, and refuses while runs in the other stack do.
func claimProcess(st informer.Stack) error {
	process.Lock()
	defer process.Unlock()
	if process.runs > 0 {
		if process.stack != st {
			return fmt.Errorf("sim: a run in the %s stack is in progress in this process; client-go's feature gates "+
				"are process-wide, so a run in the %s stack cannot overlap it", process.stack, st)
		}
		process.runs++
		return nil
	}
	process.klog.Do(func() {
		// client-go logs its reflector's warnings (a very short watch, a
		// 410) through klog; the trace says the same things in order.
		klog.SetLogger(logr.Discard())
	})
	if err := setFeatureGates(st); err != nil {
		return err
	}
	process.stack, process.runs = st, 1
	return nil
}

func releaseProcess() {
	process.Lock()
	defer process.Unlock()
	process.runs--
}

// Session is a run in progress, stepped by the caller (the scenario tests
// step it directive by directive).
type Session struct {
	r      *runner
	header Header
	n      int
}

// Open starts etcd (or connects to it) and prepares both sides; nothing
// runs until the first Step.
func Open(ctx context.Context, sc *Scenario, opts Options) (*Session, error) {
	if opts.SettleTimeout == 0 {
		opts.SettleTimeout = 10 * time.Second
	}
	r := &runner{sc: sc, opts: opts, ctx: ctx, res: listwatch.Pods, clock: clocktesting.NewFakeClock(epoch)}
	r.classic = r.stack() == informer.Classic
	if err := claimProcess(r.stack()); err != nil {
		return nil, err
	}
	r.claimed = true
	if err := r.connect(); err != nil {
		r.close()
		return nil, err
	}
	h := newHeader(sc, r.stack(), opts)
	return &Session{r: r, header: h}, nil
}

// Header is the run's header.
func (s *Session) Header() Header { return s.header }

// Step carries out st, settles, and compares.
func (s *Session) Step(st Step) (StepResult, error) {
	s.n++
	sr, err := s.r.step(s.n, st)
	if err != nil {
		return sr, fmt.Errorf("%s: %s: %w", s.r.sc.Pos(st), st.Cmd, err)
	}
	return sr, nil
}

// Finish stops both informers after the last step and compares what each
// did after that step was compared: a handler call client-go made late,
// after matching cachelab's state, would otherwise go unseen. Stopping
// releases held handlers, whose buffered calls come now; where some come
// in map order (an initial list, a resync, a relist's unchanged objects),
// they are arranged by key on both sides, as in a step.
func (s *Session) Finish() *Divergence {
	late := map[string][]entry{}
	mapOrder := false
	for _, sd := range s.r.sides {
		sd.stop()
		for _, e := range sd.rec.take() {
			if strings.HasPrefix(e.layer, layerHandler+"/") || e.layer == layerQueue {
				late[sd.impl] = append(late[sd.impl], e)
				mapOrder = mapOrder || e.unordered || strings.HasSuffix(e.text, initialListMark) || strings.HasSuffix(e.text, sameObjectMark) || strings.HasSuffix(e.text, newObjectMark)
			}
		}
	}
	lines := map[string][]string{}
	for impl, es := range late {
		for _, e := range arrange(es, mapOrder) {
			lines[impl] = append(lines[impl], e.layer+" "+e.text)
		}
	}
	if d := cmp.Diff(lines[implCachelab], lines[implClientGo]); d != "" {
		return &Divergence{Step: s.n + 1, Pos: s.r.sc.File, Cmd: "(after the last step)", Layer: "late calls", Diff: d}
	}
	return nil
}

// Close stops everything the session started.
func (s *Session) Close() { s.r.close() }

// Abandon removes what the session wrote outside the process (the
// embedded etcd's data directory, or the run's keys in an external etcd)
// without waiting for the informers, for a process about to exit because
// one of its goroutines panicked: Close would wait for that goroutine.
// Each part is bounded, so Abandon returns within about 12 s whatever
// state etcd is in.
func (s *Session) Abandon() {
	r := s.r
	if r.etcd == nil && r.client != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = r.client.Delete(ctx, "/registry/"+r.res.Resource+"/", clientv3.WithPrefix())
		cancel()
	}
	if r.etcd != nil {
		closed := make(chan struct{})
		go func() { defer close(closed); _ = r.etcd.Close() }()
		select {
		case <-closed:
		case <-time.After(2 * time.Second):
			_ = os.RemoveAll(r.etcd.Dir()) // etcd is stuck; the process is about to end it
		}
	}
}

// stack is the stack the run uses: the override, or the scenario's start.
func (r *runner) stack() informer.Stack {
	if r.opts.Stack != "" {
		return r.opts.Stack
	}
	for _, st := range r.sc.Steps {
		if st.Cmd == "start" || st.Cmd == "start-queue" {
			if v, ok := argValue(st.Args, "stack"); ok {
				s, _ := informer.ParseStack(v)
				return s
			}
		}
	}
	return informer.Default
}

// connect starts the embedded etcd (or connects to the external one) and
// gives each side its own connection.
func (r *runner) connect() error {
	endpoints := r.opts.Etcd.Endpoints
	if len(endpoints) == 0 {
		e, err := listwatch.StartEmbedded(r.ctx, listwatch.EmbeddedOptions{})
		if err != nil {
			return err
		}
		r.etcd = e
		endpoints = e.Endpoints()
	} else {
		// Never touch a real cluster's pods: an external run keeps to
		// its own prefix, and starts and ends with it empty.
		r.res.Resource = fmt.Sprintf("cachelab-sim-%d-pods", time.Now().UnixNano())
	}
	copts := r.opts.Etcd
	copts.Endpoints = endpoints
	for range 3 { // the world's, cachelab's and client-go's connections
		c, err := listwatch.Connect(r.ctx, copts)
		if err != nil {
			return err
		}
		r.clients = append(r.clients, c)
		// The next connections check first the endpoint that answered:
		// one that is down costs its dial timeout once, not three times.
		copts.Endpoints = c.Endpoints()
	}
	r.client = r.clients[0]
	r.writer = listwatch.NewWriter(r.client, r.res, listwatch.WriterOptions{
		NewUID: func() types.UID { r.uids++; return types.UID(fmt.Sprintf("uid-%d", r.uids)) },
		Now:    r.clock.Now,
	})
	for i, impl := range []string{implCachelab, implClientGo} {
		rec := &recorder{}
		if impl == implCachelab {
			rec.tamper = r.opts.tamper
		}
		// The probe is the side's connection, there from the start: a
		// lever pulled before start (fail-next, disconnect) waits for the
		// informer's first requests. Watch timeouts run on the scenario's
		// clock, as everything the world does on a timer.
		lw := listwatch.NewListerWatcher(r.clients[i+1], r.res, listwatch.Options{Clock: r.clock})
		p := newProbe(lw, r.clock, rec)
		p.tracesSteps = impl == implCachelab
		r.sides = append(r.sides, &side{impl: impl, rec: rec, clock: r.clock, ticks: newTickClock(r.clock, r.opts.lateTimers),
			probe: p, lastIndexer: map[string]string{}, lastSynced: map[string]bool{}})
	}
	return nil
}

func (r *runner) close() {
	for _, s := range r.sides {
		s.stop()
	}
	if r.claimed {
		defer releaseProcess()
		r.claimed = false
	}
	if r.etcd == nil && r.client != nil {
		// Bounded: close runs when a signal stops the run, and an etcd
		// that stopped answering must not keep the process from exiting.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = r.client.Delete(ctx, "/registry/"+r.res.Resource+"/", clientv3.WithPrefix())
		cancel()
	}
	for _, c := range r.clients {
		_ = c.Close()
	}
	if r.etcd != nil {
		_ = r.etcd.Close()
	}
}

// step carries out one command, settles both sides, and compares them.
func (r *runner) step(n int, st Step) (StepResult, error) {
	r.world = nil
	sr := StepResult{Index: n, Pos: r.sc.Pos(st), Cmd: st.Text, Sides: map[string][]Line{}}
	cmd := commands[st.Cmd]
	a, err := cmd.parse(st.Args)
	if err != nil {
		return sr, err
	}
	r.mapOrder = cmd.mapOrder
	if err := cmd.run(r, a); err != nil {
		return sr, err
	}
	err = r.settle()
	if err == nil && r.cfg != nil && r.cfg.queue && !r.paused && !r.stopped {
		err = r.drain()
	}
	if err != nil {
		if d, ok := err.(*Divergence); ok {
			d.Step, d.Pos, d.Cmd = n, sr.Pos, st.Text
			sr.Divergence = d
		} else {
			return sr, err
		}
	}
	mapOrder := cmd.mapOrder
	snaps := make([]snapshot, len(r.sides))
	entries := make([][]entry, len(r.sides))
	for i, s := range r.sides {
		snaps[i] = s.snapshot()
		if st.Cmd != "show" {
			s.noteChanges(snaps[i])
		}
		if st.Cmd == "show" {
			r.show(s, a, snaps[i])
		}
		entries[i] = s.rec.take()
		mapOrder = mapOrder || anyMapOrdered(entries[i])
	}
	for i, s := range r.sides {
		lines := toLines(arrange(entries[i], mapOrder))
		lines = append(lines, r.invariants(s, snaps[i])...)
		sr.Sides[s.impl] = lines
	}
	sr.World = r.world
	if sr.Divergence == nil {
		if d := compareSides(sr, snaps, r.cfg != nil && r.cfg.queue, r.classic); d != nil {
			d.Step, d.Pos, d.Cmd = n, sr.Pos, st.Text
			sr.Divergence = d
		}
	}
	return sr, nil
}

func toLines(es []entry) []Line {
	out := make([]Line, len(es))
	for i, e := range es {
		out[i] = Line{Layer: e.layer, Key: e.key, Text: e.text}
	}
	return out
}

func (r *runner) note(layer, key, text string) {
	r.world = append(r.world, Line{Layer: layer, Key: key, Text: text})
}

// compareSides compares every layer both sides record, in pipeline order,
// and the state behind them; the first difference is the divergence.
func compareSides(sr StepResult, snaps []snapshot, queueWorld, classic bool) *Divergence {
	by := func(lines []Line) map[string][]string {
		m := map[string][]string{}
		for _, l := range lines {
			if compared(l.Layer, queueWorld) || l.Layer == layerNote {
				m[l.Layer] = append(m[l.Layer], l.Text)
			}
		}
		return m
	}
	a, b := by(sr.Sides[implCachelab]), by(sr.Sides[implClientGo])
	layers := map[string]bool{}
	for l := range a {
		layers[l] = true
	}
	for l := range b {
		layers[l] = true
	}
	names := make([]string, 0, len(layers))
	for l := range layers {
		names = append(names, l)
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := layerRank(names[i]), layerRank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	for _, l := range names {
		if d := cmp.Diff(a[l], b[l]); d != "" {
			return &Divergence{Layer: l, Diff: d}
		}
	}
	sa, sb := snaps[0], snaps[1]
	sa.StoreRV, sb.StoreRV = comparableStoreRV(sa, classic), comparableStoreRV(sb, classic)
	if d := cmp.Diff(sa, sb); d != "" {
		return &Divergence{Layer: "state", Diff: d}
	}
	return nil
}

// comparableStoreRV is the indexer's resourceVersion where it means
// something: in the classic stack it is the RV of whichever object was
// written last, which after a resync depends on map order.
func comparableStoreRV(sn snapshot, classic bool) string {
	if classic {
		return ""
	}
	return sn.StoreRV
}

// --- world actions ---

// --- settling ---

// --- invariants ---
