package sim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/cachelab/cachelab/cluster"
	"github.com/cachelab/cachelab/controller"
	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/internal/scenarioclock"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
)

// Options configures a run.
type Options struct {
	// Replay, if set, runs the scenario against a recorded session
	// (replay.go): the scenario is then Replay.Scenario's.
	Replay *Replay
	// Stack, if set, overrides the stack the scenario's start asks for.
	Stack informer.Stack
	// Server, if set, overrides the world the scenario asks for (its
	// "# Server:" line): scenario.ServerEtcd or scenario.ServerWatchCache.
	Server string
	// Seed seeds cachelab's randomness (backoff jitter, watch timeouts).
	Seed uint64
	// Etcd, if it has endpoints, is an external etcd to run on instead of
	// the embedded one. The run writes under its own prefix and removes
	// what it wrote.
	Etcd listwatch.ClientOptions
	// EtcdMembers, if above 0, is how many members the embedded etcd
	// has, whatever the scenario asks (etcd-cluster asks for a cluster).
	EtcdMembers int
	// EtcdDir, if set, is the embedded etcd's data directory: an empty
	// directory the caller made, and removes once the session is closed
	// (the CLI does, so that it knows from the start what to remove
	// should it have to exit at once). Empty: a temporary directory,
	// removed by Close.
	EtcdDir string
	// EtcdTempDir is where the embedded etcd's temporary data directory
	// is made when EtcdDir is empty: os.TempDir() if empty too. The CLI's
	// explore gives every run one directory of its own, to remove at
	// once should a second signal end the process.
	EtcdTempDir string
	// EtcdLogger receives the embedded etcd's logs: none if nil. Its
	// fatal and panic hooks decide what etcd's own fatal errors do (the
	// CLI holds them while it ends the process at once).
	EtcdLogger *zap.Logger
	// QuickClose makes Close return as soon as what the run owns outside
	// the process is gone (the embedded etcd stopped and its temporary
	// data directory removed, or the run's keys deleted from an external
	// etcd), without waiting for the embedded etcd's last listeners and
	// connections to close: an etcd cluster's take up to about 6 s. For a
	// process that exits after the run, as the CLI does; a test that
	// checks nothing is left running leaves it off.
	QuickClose bool
	// CompactExternalEtcd lets compact run on an external etcd (Etcd),
	// where it is refused otherwise: etcd's compaction is global, and
	// discards every application's history before the revision, not
	// only the run's (check.go).
	CompactExternalEtcd bool
	// SettleTimeout bounds how long a side may go without progress while
	// a step settles (10s if 0): a new trace line, a change in its
	// connection's state or a relist backoff in progress restarts it.
	SettleTimeout time.Duration
	// OnStep, if set, hears each step's result as soon as it is known;
	// returning false stops the run.
	OnStep func(trace.StepResult) bool
	// OnRealWait, if set, hears that the run has begun to wait d of real
	// time, computing nothing meanwhile: a relist backoff, which
	// client-go waits on the real clock whatever clock it is given
	// (setClock), and cachelab's side as long (RelistClock). It is called
	// on the run's goroutines, as cachelab's reflector starts the wait.
	OnRealWait func(d time.Duration)
	// Plant, if set, names a known bug (Plants) to put into cachelab's
	// side: the comparison with client-go should find it.
	Plant string
	// ConsistencyDetector, if set, overrides the scenario's "# Env:
	// KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=..." line: DetectorOn or
	// DetectorOff switches the data consistency detector for both sides
	// (detector.go).
	ConsistencyDetector string
	// Wire runs the watch-cache world over HTTPS (the CLI's --server
	// apiserver): kube-apiserver in-process (package kubeapiserver) serves
	// the cache, and each side's informer reaches it through its own HTTP
	// client, cachelab's package wire and client-go's dynamic client.
	Wire bool
	// Cluster, if set, runs the scenario on a cluster (the CLI's
	// --kubeconfig): in a namespace the run makes there and deletes at
	// its end, with both informers reaching the cluster's kube-apiserver
	// over HTTPS, and the writes going through its API (cluster.go).
	Cluster *cluster.Cluster

	// tamper, in tests only, alters cachelab's recorded lines.
	tamper func(*trace.Event)
	// ctlPlant, in tests only, alters cachelab's controller's options: a
	// bug planted in cachelab's loop, which the comparison must catch.
	ctlPlant func(*controller.Options)
	// factoryPlant, in tests only, stands in for cachelab's factory in
	// every factory a scenario makes: a bug planted in it, which the
	// comparison must catch.
	factoryPlant func(clFactory) clFactory
	// ctlRestless, in tests only, makes every reconcile write: each
	// records the resourceVersion it read beside the image, which its
	// own write changes, so its key is never at rest.
	ctlRestless bool
	// secondBySecond, in tests only, moves the clock through every second
	// of an advance in the watch-cache world, quiet or not: the reference
	// the quiet moves are held against.
	secondBySecond bool
	// progressNotify, in tests only, is how often the embedded etcd sends
	// progress notifications on the watches that ask for them (etcd's
	// 10 minutes of wall time if 0).
	progressNotify time.Duration
	// lateTimers, in tests only, makes each side's clock wait this long
	// (real time) before it makes a timer, and before it hands on a
	// timer's tick: a reflector's goroutine that a busy machine runs
	// late.
	lateTimers time.Duration
	// lateReads, in tests only, makes each side's clock wait this long
	// (real time) before it tells the time: a component's goroutine that
	// a busy machine runs late just before it reads the scenario's clock.
	lateReads time.Duration
	// lateRequests, in tests only, makes kube-apiserver over HTTPS
	// (Wire) wait this long (real time) with each of client-go's
	// requests once it has counted it received, before it serves it: a
	// handler that a busy machine runs late, while cachelab's request
	// of the same moment has gone on to the watch cache.
	lateRequests time.Duration
}

// Result is a whole run.
type Result struct {
	Header trace.Header       `json:"header"`
	Steps  []trace.StepResult `json:"steps"`
	// Divergence is the first divergence; the run stopped there.
	Divergence *trace.Divergence `json:"divergence,omitempty"`
}

// runner runs one scenario: one etcd, a writer, a fake clock, and the two
// sides.
type runner struct {
	claimed bool // it holds the process's client-go settings (claimProcess)
	sc      *scenario.Scenario
	opts    Options
	ctx     context.Context
	// res is start's informer's resource, pods; on an external etcd
	// under the run's prefix (resourceNamed).
	res   listwatch.Resource
	clock *scenarioclock.Clock
	full  *world.Full // what package sim/full links in; Check made sure the run has what it needs
	runID string      // the label of the goroutines its world starts (asWorld)
	// users maps each side's user (userOf) to its goroutines' label
	// (parked.go), for kube-apiserver to put on the goroutines that
	// serve it; read from the server's goroutines.
	users sync.Map
	sides []*side // two per informer, cachelab's then client-go's: start's first, then each factory's (pairs)
	// where is the run's world (worlds.go).
	where runWorld
	stepN int // the step being played
	// armed is a fault armed inside the next step (connlevers.go).
	armed armedCut
	cfg   *startConfig  // set by start
	world []trace.Event // the current step's world events
	// listed is what etcd held at a resourceVersion, within the
	// informer's scope, as the step's invariants read it (etcdAt): both
	// sides are usually at the same one.
	listed map[string]listedAt
	uids   int
	// created counts the objects created so far (Session.Progress reads
	// it from another goroutine while a step runs).
	created atomic.Int64
	// uidOf is the UID each key was last created with, so that a create
	// under a name that had another object says so.
	uidOf   map[string]string
	paused  bool
	stopped bool // stop ran: the informers keep their state and run no more
	classic bool // the run's stack is the classic one
	// heldMayGo is set when the step changed etcd: the retries held
	// until it did go through when the step settles (letHeldGo).
	heldMayGo bool
	// moves counts the clock's moves in advances: what a long advance
	// costs (each move settles both sides).
	moves int
	// factories are the scenario's informer factories (factories.go), by
	// name.
	factories map[string]*simFactory

	// ctl is the scenario's controllers (controllers.go).
	ctl controllerRun
}

// epoch is the fake clock's start: every run's timestamps are the same.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Run runs sc: both implementations over one etcd, step by step, settling
// and comparing after each step. It returns at the first divergence (in
// Result.Divergence) or at the end. An error means the run itself could
// not go on (etcd did not start, a step could not be carried out).
func Run(ctx context.Context, sc *scenario.Scenario, opts Options) (res *Result, err error) {
	ses, err := Open(ctx, sc, opts)
	if err != nil {
		return nil, err
	}
	defer func() {
		ses.Close()
		if left := ses.LeftBehind(); left != nil && err == nil {
			err = fmt.Errorf("after the run: %w", left)
		}
	}()
	res = &Result{Header: ses.Header()}
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
	// detector is whether the runs have the data consistency detector
	// on, a switch as process-wide as the gates (detector.go);
	// restoreDetector puts back what the first run found. idle is
	// closed when the last run in progress ends.
	detector        bool
	restoreDetector func()
	idle            chan struct{}
}

// claimProcess sets client-go's feature gates for st, and both
// implementations' data consistency detector as detector says, unless
// runs in st hold them already. It refuses while runs in the other stack
// are in progress (the tests group their runs by stack), and waits, until
// ctx ends, while runs of its stack with the other detector setting are:
// a scenario's environment is its own, and runs side by side in one
// process (the tests) would otherwise each have to know every other's.
func claimProcess(ctx context.Context, st informer.Stack, detector bool) error {
	process.Lock()
	defer process.Unlock()
	for process.runs > 0 && process.stack == st && process.detector != detector {
		idle := process.idle
		process.Unlock()
		select {
		case <-idle:
		case <-ctx.Done():
			process.Lock()
			return fmt.Errorf("sim: waiting for the runs with the data consistency detector %s to end: %w", onOff(!detector), ctx.Err())
		}
		process.Lock()
	}
	if process.runs > 0 {
		if process.stack != st {
			return fmt.Errorf("sim: a run in the %s stack is in progress in this process; client-go's feature gates "+
				"are process-wide, so a run in the %s stack cannot overlap it", process.stack, st)
		}
		process.runs++
		return nil
	}
	quietKlog()
	if err := setFeatureGates(st); err != nil {
		return err
	}
	process.stack, process.runs = st, 1
	process.detector, process.restoreDetector = detector, setDetector(detector)
	process.idle = make(chan struct{})
	return nil
}

func onOff(on bool) string {
	if on {
		return DetectorOn
	}
	return DetectorOff
}

// quietKlog silences klog, once per process: client-go logs its
// reflector's warnings (a very short watch, a 410) through klog, and the
// trace says the same things in order. klog's logger is a plain variable
// that every klog call reads, an etcd client's gRPC logging among them,
// so this must come before any such goroutine exists: the first run's
// claimProcess, before it connects to etcd, or a test that starts an etcd
// of its own before its first run.
func quietKlog() {
	process.klog.Do(func() { klog.SetLogger(logr.Discard()) })
}

func releaseProcess() {
	process.Lock()
	defer process.Unlock()
	process.runs--
	if process.runs == 0 {
		process.restoreDetector()
		close(process.idle)
	}
}

// Session is a run in progress, stepped by the caller (the scenario tests
// step it directive by directive).
type Session struct {
	r      *runner
	rec    *trace.Recorder // cachelab's side's recorder, of start's informer, for Progress
	header trace.Header
	n      int
}

// Open checks that the run's options can carry out every step (Check),
// starts etcd (or connects to it) and prepares both sides; nothing runs
// until the first Step.
func Open(ctx context.Context, sc *scenario.Scenario, opts Options) (*Session, error) {
	if err := Check(sc, opts); err != nil {
		return nil, err
	}
	if opts.SettleTimeout == 0 {
		opts.SettleTimeout = 10 * time.Second
	}
	r := &runner{sc: sc, opts: opts, ctx: ctx, res: listwatch.Pods, clock: scenarioclock.New(epoch), full: world.Linked()}
	r.classic = r.stack() == informer.Classic
	if err := claimProcess(ctx, r.stack(), r.detector()); err != nil {
		return nil, err
	}
	r.claimed = true
	r.where = r.newWorld()
	if err := r.where.connect(); err != nil {
		r.close()
		return nil, err
	}
	h := newHeader(sc, r.stack(), r.server(), opts)
	if r.detector() {
		h.Env = map[string]string{scenario.EnvDetector: "true"}
	}
	r.where.describe(&h)
	return &Session{r: r, rec: r.sides[0].rec, header: h}, nil
}

// Header is the run's header.
func (s *Session) Header() trace.Header { return s.header }

// Clock is how far the run's fake clock has moved since the run began:
// the scenario's time, as its "clock +30s (now 1m30s)" lines say it.
func (s *Session) Clock() time.Duration { return s.r.clock.Since(epoch) }

// Step carries out st, settles, and compares.
func (s *Session) Step(st scenario.Step) (trace.StepResult, error) {
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
// releases held handlers, whose buffered calls come now. The late calls
// are compared like a step's (trace.Compare): fixed places exactly, free
// batches as multisets.
func (s *Session) Finish() *trace.Divergence {
	late := map[string][]trace.Event{}
	for _, sd := range s.r.sides {
		sd.stop()
		taken := sd.rec.Take()
		s.r.where.shown(taken)
		if sd == s.r.sides[0] {
			s.r.where.took(taken)
		}
		for _, e := range taken {
			if e.Base() == trace.LayerHandler || e.Layer == trace.LayerTransform {
				late[sd.impl] = append(late[sd.impl], e)
			}
		}
	}
	if layer, d := trace.Compare(trace.Arrange(late[trace.Cachelab]), trace.Arrange(late[trace.ClientGo]), false); d != "" {
		return &trace.Divergence{Step: s.n + 1, Pos: s.r.sc.File, Cmd: "(after the last step)", Layer: "late calls in " + layer, Diff: d}
	}
	return nil
}

// Close stops everything the session started and removes what it wrote
// outside the process (the run's keys in an external etcd; the embedded
// etcd's temporary data directory). It returns once every goroutine the
// session started has ended, or, with Options.QuickClose, once that data
// is gone.
func (s *Session) Close() { s.r.close() }

// LeftBehind is what Close could not remove, on a cluster: the run's
// namespace, with the reason; nil once everything is gone.
func (s *Session) LeftBehind() error { return s.r.where.leftBehind() }

// Abandon removes what the session wrote outside the process (the
// embedded etcd's data directory, the run's keys in an external etcd, or
// the run's namespace on a cluster) without waiting for the informers,
// for a process about to exit because one of its goroutines panicked:
// Close would wait for that goroutine. Each part is bounded, so Abandon
// returns within about 12 s whatever state etcd or the cluster is in.
func (s *Session) Abandon() {
	r := s.r
	r.where.end(10 * time.Second)
	r.where.abandon()
}

// KeyPrefix is where the run writes in an external etcd (its own
// prefix, which Close deletes), or "" on the embedded etcd.
func (s *Session) KeyPrefix() string {
	return s.r.where.ownKeys()
}

// writerOptions are every writer's: one sequence of UIDs over all
// resources, and the scenario's clock for creation timestamps.
func (r *runner) writerOptions() listwatch.WriterOptions {
	return listwatch.WriterOptions{
		NewUID: func() types.UID { r.uids++; return types.UID(fmt.Sprintf("uid-%d", r.uids)) },
		Now:    r.clock.Now,
	}
}

// writerOf is what a write of the resource a scenario names goes
// through: the world's answer (runWorld.writer).
func (r *runner) writerOf(name string) (objectWriter, error) {
	if name == "" {
		name = scenario.DefaultResource
	}
	return r.where.writer(name)
}

// podsWriter is where the controllers' writes of pods go: every world
// that runs a writing controller takes writes of pods.
func (r *runner) podsWriter() objectWriter {
	w, _ := r.writerOf(scenario.DefaultResource)
	return w
}

// resourceNamed is the resource a scenario names (resourceOf), under
// the run's own prefix on an external etcd.
func (r *runner) resourceNamed(name string) listwatch.Resource {
	return r.where.placed(r.resourceOf(name))
}

// builtIn is the resource a scenario names (scenario.Resources).
func builtIn(name string) listwatch.Resource {
	for _, res := range listwatch.BuiltIn {
		if res.Resource == name {
			return res
		}
	}
	panic("sim: no resource " + name) // the scenario's parser knows them all
}

// stack is the stack the run uses: the override, or the scenario's start.
func (r *runner) stack() informer.Stack {
	if r.opts.Stack != "" {
		return r.opts.Stack
	}
	for _, st := range r.sc.Steps {
		if st.Cmd == "start" || st.Cmd == "start-queue" {
			if v, ok := st.Value("stack"); ok {
				s, _ := informer.ParseStack(v)
				return s
			}
		}
	}
	return informer.Default
}

// server is the world the run uses: the override, the scenario's, or
// the default.
func (r *runner) server() string {
	if r.opts.Cluster != nil {
		return ServerCluster
	}
	if r.opts.Replay != nil {
		return ServerReplay
	}
	if r.opts.Server != "" {
		return r.opts.Server
	}
	return r.sc.WrittenFor()
}

// worldAllows says why a step cannot run in the run's world (a
// scenario run with --server in the other one), or nil. Check refuses
// such a step before the run starts; this is the step's own guard.
func (r *runner) worldAllows(cmd string, a scenario.Args) error {
	return StepAllows(cmd, a, WorldOf(r.sc, r.opts))
}

// describeServer names a run's server as its --server flag does, and
// says what it is.
func describeServer(w string, wire bool) string {
	switch {
	case wire:
		return "--server apiserver (kube-apiserver over HTTPS, with its watch cache)"
	case w == scenario.ServerWatchCache:
		return "--server watchcache (kube-apiserver's watch cache, in process)"
	}
	return "--server etcd (kube-apiserver's storage with its watch cache off)"
}

// startPair makes the pair of sides of start's informer, once the world
// is there to serve it.
func (r *runner) startPair() error {
	sides, err := r.newPair("", r.res)
	if err != nil {
		return err
	}
	r.sides = sides
	if r.opts.Plant != "" {
		p, _ := LookupPlant(r.opts.Plant) // Check knows it
		r.sides[0].plant, r.sides[0].plantWatch = p.handler, p.watch
	}
	return nil
}

// newPair makes both implementations' sides of one informer, each with
// its own connection and recorder; label names the informer in the
// trace (Event.Informer), "" for start's. In the etcd world another
// informer's sides have etcd connections of their own, as start's do: a
// progress request settling asks for on a connection reaches every watch
// on it, and must reach that informer's only.
func (r *runner) newPair(label string, res listwatch.Resource) ([]*side, error) {
	var pair []*side
	target := &res // what both sides' connections serve (side.target)
	for i, impl := range []string{trace.Cachelab, trace.ClientGo} {
		rec := &trace.Recorder{Informer: label}
		if impl == trace.Cachelab {
			rec.Tamper = r.opts.tamper
		}
		// The connection (world.Conn) is there from the start: a
		// lever pulled before start (fail-next, disconnect) waits for the
		// informer's first requests. Watch timeouts run on the scenario's
		// clock, as everything the world does on a timer.
		user := userOf(impl, label)
		server, client, err := r.where.server(label, target, i, impl, user, rec)
		if err != nil {
			return nil, err
		}
		id := newSideID()
		r.users.Store(userOf(impl, label), id)
		p := world.NewConn(server, r.clock, rec)
		r.where.made(p)
		if r.armed.step != 0 {
			r.armConn(p) // an informer made in the step a cut is armed for
		}
		pair = append(pair, &side{id: id, impl: impl, user: userOf(impl, label), target: target, rec: rec, clock: r.clock, ticks: newTickClock(r.clock, r.opts.lateTimers, r.opts.lateReads),
			conn: p, client: client, lastIndexer: map[string]string{}, view: newIndexView(), lastSynced: map[string]bool{}, realWait: r.opts.OnRealWait})
		if r.detector() {
			watchForDetections(pair[len(pair)-1])
		}
	}
	pair[0].peer, pair[1].peer = pair[1], pair[0]
	return pair, nil
}

// userOf is the user a side's requests come from, on the wire and on a
// cluster: its implementation, and its informer's label.
func userOf(impl, label string) string {
	if label != "" {
		return impl + ":" + label
	}
	return impl
}

// pairs is the run's informers, each as its two sides (cachelab's,
// client-go's): start's first, then each factory's, in the order made.
func (r *runner) pairs() [][2]*side {
	var out [][2]*side
	for i := 0; i+1 < len(r.sides); i += 2 {
		out = append(out, [2]*side{r.sides[i], r.sides[i+1]})
	}
	return out
}

// live reports whether s's informer runs: it was started, by start or
// its factory, and not stopped.
// A side whose reflector the data consistency detector stopped
// (detector.go) runs no more either.
func (r *runner) live(s *side) bool {
	return s.running && s.inf != nil && !s.halted && !s.crashed.Load()
}

// livePairs is the pairs whose informers run. A pair whose cachelab
// side the data consistency detector has stopped still runs while its
// client-go side does: settling waits for that side's detection too.
func (r *runner) livePairs() [][2]*side {
	var out [][2]*side
	for _, p := range r.pairs() {
		if r.live(p[0]) || p[0].crashed.Load() && r.live(p[1]) {
			out = append(out, p)
		}
	}
	return out
}

// queueWorld reports whether the run's informers are start-queue's bare
// queues.
func (r *runner) queueWorld() bool { return r.cfg != nil && r.cfg.queue }

func (r *runner) close() {
	if r.where != nil {
		r.where.release()
	}
	r.stopControllers()
	for _, s := range r.sides {
		s.stop()
		forgetDetections(s)
	}
	if r.claimed {
		defer releaseProcess()
		r.claimed = false
	}
	if r.where != nil {
		r.where.end(time.Minute)
		r.where.close()
	}
}

// step carries out one command, settles both sides, and compares them.
func (r *runner) step(n int, st scenario.Step) (trace.StepResult, error) {
	r.world, r.listed, r.stepN = nil, nil, n
	began := time.Now()
	sr := trace.StepResult{Index: n, Pos: r.sc.Pos(st), Cmd: st.Text, Sides: map[string][]trace.Event{}}
	a, err := scenario.ParseArgs(st)
	if err != nil {
		return sr, err
	}
	if err := r.worldAllows(st.Cmd, a); err != nil {
		return sr, err
	}
	// A command that settles as it goes (advance, in the watch-cache
	// world) may meet a divergence on the way.
	err = runs[st.Cmd].pull(r, st.Cmd, a)
	if _, diverged := err.(*trace.Divergence); err != nil && !diverged {
		return sr, err
	}
	if err == nil {
		err = r.settle()
	}
	if err == nil && r.queueWorld() && !r.paused && !r.stopped {
		err = r.drain()
	}
	if err == nil {
		err = r.reconcileAll()
	}
	if r.armed.step != 0 && r.armed.step < n {
		r.disarm()
	}
	r.where.stepped(&sr, began)
	if err != nil {
		if d, ok := err.(*trace.Divergence); ok {
			d.Step, d.Pos, d.Cmd = n, sr.Pos, st.Text
			sr.Divergence = d
		} else {
			return sr, err
		}
	}
	snaps := make([]snapshot, len(r.sides))
	for i, s := range r.sides {
		snaps[i] = s.snapshot()
		if st.Cmd != "show" {
			s.noteChanges(snaps[i])
		}
		if st.Cmd == "show" {
			r.show(s, a, snaps[i])
		}
		events := append(s.rec.TakeArranged(), r.invariants(s, snaps[i])...)
		r.where.shown(events)
		if i == 0 {
			r.where.took(events)
		}
		if prev := sr.Sides[s.impl]; prev != nil {
			// A second informer's lines after the first's. (The first's
			// are kept as they are: a step of a large run holds
			// hundreds of thousands, not to be copied.)
			events = append(prev, events...)
		}
		sr.Sides[s.impl] = events
	}
	sr.World = r.world
	queueWorld := r.queueWorld()
	// The step's events are compared once: for the divergence, and to
	// show client-go's free batches in cachelab's order where they agree.
	// Each informer's lines come together, start's first, so the lines
	// of several informers are compared informer by informer.
	cl, cg := sr.Sides[trace.Cachelab], sr.Sides[trace.ClientGo]
	layer, d := trace.Compare(cl, cg, queueWorld)
	if sr.Divergence == nil {
		compared := make([]snapshot, len(snaps))
		for i, sn := range snaps {
			compared[i] = r.comparable(sn)
		}
		if d := compareSides(layer, d, r.sides, compared, r.classic); d != nil {
			d.Step, d.Pos, d.Cmd = n, sr.Pos, st.Text
			sr.Divergence = d
		}
	}
	if layer == "" {
		sr.Sides[trace.ClientGo] = trace.Realign(cl, cg, queueWorld)
	}
	return sr, nil
}

// note records what the world or a lever did.
func (r *runner) note(layer, key, text string) {
	r.world = append(r.world, trace.Event{Layer: layer, Kind: trace.KindWorld, Key: key, Detail: text})
}

// noteLever records what a lever did, named (trace.Lever*) so that an
// object's story can name it as a cause.
func (r *runner) noteLever(layer, lever, text string) {
	r.world = append(r.world, trace.Event{Layer: layer, Kind: trace.KindWorld, Op: lever, Detail: text})
}

// noteWrite records a write of obj to etcd (op: create, update, delete).
func (r *runner) noteWrite(op string, obj any, prevRV, text string) {
	e := trace.ObjectEvent(trace.LayerEtcd, trace.KindWrite, op, obj, text)
	e.PrevRV = prevRV
	r.world = append(r.world, e)
}

// compareSides is the step's divergence, if any: the first layer whose
// events differ (trace.Compare's layer and diff, in pipeline order), else
// the state behind them.
func compareSides(layer, d string, sides []*side, snaps []snapshot, classic bool) *trace.Divergence {
	if d != "" {
		return &trace.Divergence{Layer: layer, Diff: d}
	}
	for i := 0; i+1 < len(snaps); i += 2 {
		sa, sb := snaps[i], snaps[i+1]
		sa.StoreRV, sb.StoreRV = comparableStoreRV(sa, classic), comparableStoreRV(sb, classic)
		if !sa.equal(sb) {
			diff := cmp.Diff(sa, sb)
			if l := sides[i].rec.Informer; l != "" {
				diff = "informer " + l + ":\n" + diff
			}
			return &trace.Divergence{Layer: "state", Diff: diff}
		}
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
