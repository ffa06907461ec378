package world

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/apistorage/source"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/trace"
)

// Conn sits between one informer and its etcd ListerWatcher. Both
// implementations get the same kind of Conn, so everything it sees (the
// requests, the watch events handed over) is seen the same way on both
// sides. It is also the scenario's lever on the connection: it applies the
// informer's namespace and selectors, fails the next request on demand,
// and holds requests while the scenario says the informer is
// disconnected.
//
//	informer ──LIST/WATCH──▶ Conn ──▶ listwatch.ListerWatcher ──▶ etcd
//	         ◀──events──────       ◀──
type Conn struct {
	base  Server // all namespaces; lw is it or a namespace of it
	lw    Server
	ns    func(namespace string) Server // the same server, one namespace's path
	clock clock.PassiveClock            // the scenario's: watch deadlines are on it
	born  time.Time                     // the clock's time when the connection was made: the scenario's start
	rec   *trace.Recorder

	mu              sync.Mutex
	labels          string         // label selector added to every request
	fields          string         // field selector added to every request
	namespace       string         // the informer's namespace ("" for all)
	failNext        map[string]int // verb ("list", "watch") -> HTTP status for the next call
	failPage        int            // with failNext["list"]: only the LIST request for this page fails (0: any)
	listPage        int            // the page the last LIST request asked for (1: no continue token)
	expireContinue  bool           // the next LIST with a continue token gets the 410 of a compacted one
	stale           chan struct{}  // closed when etcd changes; non-nil after a LIST failed on a corrupt value
	stalled         int            // calls waiting in stale
	staleWhy        string         // why they wait, for the trace
	held            chan struct{}  // closed on reconnect; nil while connected
	paused          chan struct{}  // closed by Resume; nil unless a lever paused the calls (Pause)
	waiting         int            // calls waiting in held
	open            map[*connWatch]struct{}
	parked          bool          // the last call failed with a status whose retry waits on the fake clock
	parkedUntil     time.Time     // (cachelab) when that wait ends, on the fake clock
	showBooks       int           // bookmarks a progress step asked for and not yet seen (others are labelled as the simulator's)
	progress        chan struct{} // signalled on every bookmark
	history         []string      // every request line, for "show requests"
	listing         bool          // a LIST or watch-list was sent and its Replace is not done (only cachelab reports Replace)
	handed, handled int           // watch events given to the reflector, and (cachelab) applied by it
	watches         int           // watch requests so far, to name them
	inRelay         int           // events taken from etcd and not yet handed over and recorded
	backoffEnd      time.Time     // (cachelab) when its relist backoff, on the real clock, ends
	backoffDelay    time.Duration // (cachelab) that backoff's length
	relists         int           // (cachelab) relist backoffs begun, in all
	cutLeft         int           // with a cut armed (CutAfter): object events still to hand over before it; 0 when none is armed
	cutDrop         bool          // the armed cut drops the connection (else the server closes the watches)
	cutEvents       int           // the armed cut's count, for its trace line
	cutPages        int           // with a drop armed between a LIST's pages (CutAfterPages): pages with more to come still to answer before it; 0 when none is armed
	calls           int           // LIST and WATCH calls in progress (callsDone is signalled when one ends)
	callsDone       *sync.Cond    // on mu
	// lose are the objects (ns/name) the next watch-list leaves out of
	// its initial events (lose.go).
	lose map[string]bool
	// cluster, on a cluster (OnCluster), is the scenario's clock, on
	// which the connection ends each watch at its timeout; nil elsewhere.
	cluster clock.Clock
}

// OnCluster readies the connection for a cluster's server, whose clock
// is the wall clock and not the scenario's (cluster.go in package sim):
//
//   - The connection ends each watch when its timeout passes on the
//     scenario's clock, c, as the in-process servers end it. The
//     cluster's own timer, minutes of wall time away, would not end it
//     within a run, and would end it at different moments for the two
//     informers.
//   - It keeps the cluster's periodic bookmarks from the reflector,
//     saying so in a sim line, and hands on the one that ends a
//     watch-list's initial events. A cluster sends the others when its
//     wall clock says, to each watch at its own moment: handed on, they
//     would move one informer's resourceVersion and not the other's, at
//     no step in particular. A bookmark is an offer the server may
//     always leave out; nothing else is kept back.
func (p *Conn) OnCluster(c clock.Clock) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cluster = c
}

// request records a request (op LIST, WATCH or WATCH-LIST, at rv) or its
// answer (op "answer"), in the trace and in the history.
func (p *Conn) request(op, watchID, rv, text string) {
	p.record(trace.Event{Layer: trace.LayerRequest, Kind: trace.KindRequest, Op: op, Watch: watchID, RV: rv, Detail: text})
}

func (p *Conn) record(e trace.Event) {
	p.mu.Lock()
	p.history = append(p.history, e.Detail)
	p.mu.Unlock()
	p.rec.Record(e)
}

// answer records how a request was answered.
func (p *Conn) answer(watchID, rv, text string) { p.request("answer", watchID, rv, "  -> "+text) }

// refused records a request answered with an error, and the error's
// HTTP status where it has one (an API status).
func (p *Conn) refused(watchID string, err error, suffix string) {
	e := trace.Event{Layer: trace.LayerRequest, Kind: trace.KindRequest, Op: "answer", Watch: watchID, Detail: "  -> " + DescribeErr(err) + suffix}
	if st, ok := err.(apierrors.APIStatus); ok { // as DescribeErr names it
		e.Status = int(st.Status().Code)
	}
	p.record(e)
}

// Requests is every request line so far, for "show requests".
func (p *Conn) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.history...)
}

// NewConn returns a connection to a server: server("") is its view of all
// namespaces, server(ns) of one.
func NewConn(server func(namespace string) Server, clk clock.PassiveClock, rec *trace.Recorder) *Conn {
	var base Server
	if server != nil {
		base = server("")
	}
	p := &Conn{base: base, lw: base, ns: server, clock: clk, born: clk.Now(), rec: rec,
		failNext: map[string]int{}, open: map[*connWatch]struct{}{}, progress: make(chan struct{}, 1)}
	p.callsDone = sync.NewCond(&p.mu)
	return p
}

// call begins a LIST or WATCH call; the call must run end() when it
// returns. A call whose context is already done is not made: a client
// never sends a request it was told to give up (client-go, stopping in
// the middle of a watch-list, still asks for a LIST with its cancelled
// context), so it leaves no trace line.
func (p *Conn) call(ctx context.Context) (end func(), err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.calls++
	return func() {
		p.mu.Lock()
		p.calls--
		p.callsDone.Broadcast()
		p.mu.Unlock()
	}, nil
}

// Quiesce waits until no call is in progress. The informer's context must
// be cancelled first: every call then ends soon (one held by a disconnect
// ends with the context's error), and no new one begins.
func (p *Conn) Quiesce() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.calls > 0 {
		p.callsDone.Wait()
	}
}

// StartInformer readies the connection for a newly started informer with these
// selectors. The connection's state (a held connection, a failure asked
// for) stays: a lever pulled before start acts on the first requests.
// What belonged to the informer before (a stopped one) is forgotten.
func (p *Conn) StartInformer(labels, fields, namespace string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.labels, p.fields, p.namespace = labels, fields, namespace
	p.lw = p.ns(namespace)
	p.parked, p.listing, p.showBooks = false, false, 0
	if p.stale != nil { // a fresh informer lists once before it is held
		close(p.stale)
		p.stale, p.stalled = nil, 0
	}
	p.handed, p.handled = 0, 0
}

// UseServer moves the connection to the server its server function now
// gives (a second kube-apiserver, behind a load balancer): the next
// requests go there; open watches stay where they are.
func (p *Conn) UseServer() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.base, p.lw = p.ns(""), p.ns(p.namespace)
}

// IsWatchListSemanticsUnSupported passes the ListerWatcher's answer on, so
// both reflectors decide about watch-list streaming the same way.
func (p *Conn) IsWatchListSemanticsUnSupported() bool {
	return p.current().IsWatchListSemanticsUnSupported()
}

// current is the ListerWatcher the informer's requests go to, and its
// namespace as the request lines show it ("" for all namespaces).
func (p *Conn) current() Server {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lw
}

// where is the request lines' namespace prefix: "ns=<ns> " for a
// namespaced informer, else nothing.
func (p *Conn) where() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.namespace == "" {
		return ""
	}
	return "ns=" + p.namespace + " "
}

// List is ListWithContext without a context (client-go's ListerWatcher).
func (p *Conn) List(opts metav1.ListOptions) (runtime.Object, error) {
	return p.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext without a context.
func (p *Conn) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return p.WatchWithContext(context.Background(), opts)
}

// ListWithContext records the LIST, then serves it (or fails it).
func (p *Conn) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	end, err := p.call(ctx)
	if err != nil {
		return nil, err
	}
	defer end()
	p.addSelectors(&opts)
	p.request("LIST", "", opts.ResourceVersion, "LIST "+p.where()+trace.DescribeListOptions(opts))
	if err := p.admit(ctx, "list", "", p.nextPage(opts)); err != nil {
		p.refused("", err, "")
		return nil, err
	}
	var src *source.Source
	if cacheServed(p.base) {
		ctx, src = source.With(ctx)
	}
	ctx, _ = withWireCall(ctx, "LIST") // its tries' wire lines name it (wiretries.go)
	obj, err := p.serveList(ctx, opts)
	from := ""
	if src != nil {
		from = " (from " + src.String() + ")"
	}
	if err != nil {
		p.refused("", err, from)
		switch {
		case listwatch.IsStorageReadError(err):
			p.holdRetries(heldCorrupt)
		case apierrors.IsTooManyRequests(err):
			p.holdRetries(heldUnready) // from the server: an unready watch cache
		}
		return nil, err
	}
	rv, n, cont := trace.DescribeList(obj)
	p.answer("", rv, fmt.Sprintf("%d items, rv %s%s%s", n, rv, cont, from))
	if cont != "" {
		p.cutBetweenPages()
	}
	return obj, nil
}

// WatchWithContext records the WATCH, then opens it (or fails it) and
// relays its events, recording each as it is handed to the reflector.
func (p *Conn) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	end, err := p.call(ctx)
	if err != nil {
		return nil, err
	}
	defer end() // the call, not the watch it opens
	p.addSelectors(&opts)
	verb := "WATCH"
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		verb = "WATCH-LIST"
		p.setListing()
	}
	p.mu.Lock()
	p.watches++
	id := fmt.Sprintf("w%d", p.watches)
	p.mu.Unlock()
	p.request(verb, id, opts.ResourceVersion, id+" "+verb+" "+p.where()+trace.DescribeListOptions(opts))
	if err := p.admit(ctx, "watch", id, 0); err != nil {
		p.watchFailed(id, err)
		return nil, err
	}
	timeout := serverTimeout(&opts)
	srv := p.current()
	ctx, call := withWireCall(ctx, id) // its tries' wire lines name it (wiretries.go)
	inner, err := srv.WatchWithContext(ctx, opts)
	if err != nil {
		p.watchFailed(id, err)
		return nil, err
	}
	w := &connWatch{id: id, call: call, p: p, ctx: ctx, inner: inner, server: srv, out: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{}),
		initial: opts.SendInitialEvents != nil && *opts.SendInitialEvents}
	if w.initial {
		w.lose = p.takeLost()
	}
	if timeout > 0 {
		// The ListerWatcher ends the watch when the scenario's clock
		// passes this; until it has, settling waits for it.
		w.deadline = p.clock.Now().Add(timeout)
	}
	w.after = -1 // a watch-list's start is known at its end bookmark
	if rv, err := strconv.ParseInt(opts.ResourceVersion, 10, 64); err == nil && rv > 0 && verb == "WATCH" {
		w.after = rv
	}
	p.mu.Lock()
	p.open[w] = struct{}{}
	p.mu.Unlock()
	go w.relay()
	return w, nil
}

// watchFailed records a WATCH that failed, from a lever or from the
// server (an unready watch cache answers 429). The reflector's wait that
// follows a 429 parks the connection when it begins (RewatchBackoff).
func (p *Conn) watchFailed(id string, err error) {
	p.refused(id, err, "")
}

// maxWatchTimeout is how long the simulated server lets a watch live:
// the shortest timeout a reflector asks for (client-go and cachelab draw
// timeoutSeconds from [5m, 10m)).
const maxWatchTimeout = 5 * time.Minute

// serverTimeout is how long the server will keep this watch open, and
// caps opts.TimeoutSeconds to it. client-go draws its watch timeout from
// an unseeded source, so two reflectors asked to watch "as long as they
// like" would end their watches at different scenario times; a server
// that ends every watch after 5 minutes (sooner than either asked, which
// a server may always do) keeps both sides in step, run after run.
func serverTimeout(opts *metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds == nil || *opts.TimeoutSeconds <= 0 {
		return 0
	}
	d := time.Duration(*opts.TimeoutSeconds) * time.Second
	if d > maxWatchTimeout {
		capped := int64(maxWatchTimeout / time.Second)
		opts.TimeoutSeconds, d = &capped, maxWatchTimeout
	}
	return d
}

func (p *Conn) addSelectors(opts *metav1.ListOptions) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.labels != "" {
		opts.LabelSelector = p.labels
	}
	if p.fields != "" {
		opts.FieldSelector = p.fields
	}
}

// serveList answers a LIST from etcd, unless the scenario expired the
// next continuation (expire-continue): then it gets the 410 kube-apiserver
// gives once etcd has compacted the list's revision between pages (E4).
func (p *Conn) serveList(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	p.mu.Lock()
	expire := p.expireContinue && opts.Continue != ""
	if expire {
		p.expireContinue = false
	}
	p.mu.Unlock()
	if expire {
		return nil, p.current().ExpiredContinue(opts)
	}
	return p.current().ListWithContext(ctx, opts)
}

// Base is the connection's server for all namespaces, with which the
// scenario asks etcd for progress and switches server features.
func (p *Conn) Base() Server { return p.base }
