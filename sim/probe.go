package sim

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/trace"
)

// probe sits between one informer and its etcd ListerWatcher. Both
// implementations get the same kind of probe, so everything it sees (the
// requests, the watch events handed over) is seen the same way on both
// sides. It is also the scenario's lever on the connection: it applies the
// informer's selectors, fails the next request on demand, and holds
// requests while the scenario says the informer is disconnected.
//
//	informer ──LIST/WATCH──▶ probe ──▶ listwatch.ListerWatcher ──▶ etcd
//	         ◀──events──────        ◀──
type probe struct {
	base  *listwatch.ListerWatcher // all namespaces; lw is it or a namespace of it
	lw    *listwatch.ListerWatcher
	clock clock.PassiveClock // the scenario's: watch deadlines are on it
	rec   *recorder

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
	held            chan struct{}  // closed on reconnect; nil while connected
	waiting         int            // calls waiting in held
	open            map[*probeWatch]struct{}
	parked          bool          // the last call failed with a status whose retry waits on the fake clock
	tracesSteps     bool          // its reflector reports its steps (cachelab's): rewatchBackoff parks it
	showBooks       int           // bookmarks a progress step asked for and not yet seen (others are labelled as the simulator's)
	progress        chan struct{} // signalled on every bookmark
	history         []string      // every request line, for "show requests"
	listing         bool          // a LIST or watch-list was sent and its Replace is not done (only cachelab reports Replace)
	handed, handled int           // watch events given to the reflector, and (cachelab) applied by it
	watches         int           // watch requests so far, to name them
	inRelay         int           // events taken from etcd and not yet handed over and recorded
	backoffEnd      time.Time     // (cachelab) when its relist backoff, on the real clock, ends
	backoffDelay    time.Duration // (cachelab) that backoff's length
	calls           int           // LIST and WATCH calls in progress (callsDone is signalled when one ends)
	callsDone       *sync.Cond    // on mu
}

// rewatchBackoff is cachelab's reflector starting a re-watch backoff
// (after a 429), which waits on the fake clock. Parking here, not when
// the 429 is answered, keeps a settle from ending before the reflector
// has recorded the watch's end and the backoff.
func (p *probe) rewatchBackoff() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parked = true
}

// relistBackoff is cachelab's reflector starting a relist backoff of d.
// It waits on the real clock, as client-go's does; settling counts the
// wait as progress, not as a step that is stuck.
func (p *probe) relistBackoff(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backoffEnd, p.backoffDelay = time.Now().Add(d), d
}

// backoff is the relist backoff cachelab's reflector last started: when
// it ends (real time), and how long it is.
func (p *probe) backoff() (time.Time, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.backoffEnd, p.backoffDelay
}

// request records a request line in the trace and in the history.
func (p *probe) request(text string) {
	p.mu.Lock()
	p.history = append(p.history, text)
	p.mu.Unlock()
	p.rec.add(trace.LayerRequest, trace.KindRequest, "", text)
}

func (p *probe) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.history...)
}

func newProbe(lw *listwatch.ListerWatcher, clk clock.PassiveClock, rec *recorder) *probe {
	p := &probe{base: lw, lw: lw, clock: clk, rec: rec,
		failNext: map[string]int{}, open: map[*probeWatch]struct{}{}, progress: make(chan struct{}, 1)}
	p.callsDone = sync.NewCond(&p.mu)
	return p
}

// call begins a LIST or WATCH call; the call must run end() when it
// returns. A call whose context is already done is not made: a client
// never sends a request it was told to give up (client-go, stopping in
// the middle of a watch-list, still asks for a LIST with its cancelled
// context), so it leaves no trace line.
func (p *probe) call(ctx context.Context) (end func(), err error) {
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

// quiesce waits until no call is in progress. The informer's context must
// be cancelled first: every call then ends soon (one held by a disconnect
// ends with the context's error), and no new one begins.
func (p *probe) quiesce() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.calls > 0 {
		p.callsDone.Wait()
	}
}

// startInformer readies the probe for a newly started informer with these
// selectors. The connection's state (a held connection, a failure asked
// for) stays: a lever pulled before start acts on the first requests.
// What belonged to the informer before (a stopped one) is forgotten.
func (p *probe) startInformer(labels, fields, namespace string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.labels, p.fields, p.namespace = labels, fields, namespace
	p.lw = p.base.WithNamespace(namespace)
	p.parked, p.listing, p.showBooks = false, false, 0
	if p.stale != nil { // a fresh informer lists once before it is held
		close(p.stale)
		p.stale, p.stalled = nil, 0
	}
	p.handed, p.handled = 0, 0
}

// IsWatchListSemanticsUnSupported passes the ListerWatcher's answer on, so
// both reflectors decide about watch-list streaming the same way.
func (p *probe) IsWatchListSemanticsUnSupported() bool {
	return p.current().IsWatchListSemanticsUnSupported()
}

// current is the ListerWatcher the informer's requests go to, and its
// namespace as the request lines show it ("" for all namespaces).
func (p *probe) current() *listwatch.ListerWatcher {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lw
}

// where is the request lines' namespace prefix: "ns=<ns> " for a
// namespaced informer, else nothing.
func (p *probe) where() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.namespace == "" {
		return ""
	}
	return "ns=" + p.namespace + " "
}

// List is ListWithContext without a context (client-go's ListerWatcher).
func (p *probe) List(opts metav1.ListOptions) (runtime.Object, error) {
	return p.ListWithContext(context.Background(), opts)
}

// Watch is WatchWithContext without a context.
func (p *probe) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return p.WatchWithContext(context.Background(), opts)
}

// ListWithContext records the LIST, then serves it (or fails it).
func (p *probe) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	end, err := p.call(ctx)
	if err != nil {
		return nil, err
	}
	defer end()
	p.addSelectors(&opts)
	p.request("LIST " + p.where() + describeListOptions(opts))
	if err := p.admit(ctx, "list", p.nextPage(opts)); err != nil {
		p.request("  -> " + describeErr(err))
		return nil, err
	}
	obj, err := p.serveList(ctx, opts)
	if err != nil {
		p.request("  -> " + describeErr(err))
		if listwatch.IsStorageReadError(err) {
			p.holdRetries()
		}
		return nil, err
	}
	rv, n, cont := describeList(obj)
	p.request(fmt.Sprintf("  -> %d items, rv %s%s", n, rv, cont))
	return obj, nil
}

// WatchWithContext records the WATCH, then opens it (or fails it) and
// relays its events, recording each as it is handed to the reflector.
func (p *probe) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
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
	p.request(id + " " + verb + " " + p.where() + describeListOptions(opts))
	if err := p.admit(ctx, "watch", 0); err != nil {
		p.request("  -> " + describeErr(err))
		if apierrors.IsTooManyRequests(err) && !p.tracesSteps {
			// The reflector now waits its re-watch backoff on the (fake)
			// clock: it stays put until the scenario advances time.
			// (cachelab's says so itself, once it has recorded the
			// watch's end: rewatchBackoff.)
			p.mu.Lock()
			p.parked = true
			p.mu.Unlock()
		}
		return nil, err
	}
	timeout := serverTimeout(&opts)
	inner, err := p.current().WatchWithContext(ctx, opts)
	if err != nil {
		p.request("  -> " + describeErr(err))
		return nil, err
	}
	w := &probeWatch{id: id, p: p, ctx: ctx, inner: inner, out: make(chan watch.Event), stop: make(chan struct{}), done: make(chan struct{}),
		initial: opts.SendInitialEvents != nil && *opts.SendInitialEvents}
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

func (p *probe) addSelectors(opts *metav1.ListOptions) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.labels != "" {
		opts.LabelSelector = p.labels
	}
	if p.fields != "" {
		opts.FieldSelector = p.fields
	}
}

func (p *probe) setListing() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listing = true
}

// replaced is cachelab's reflector saying its Replace is done.
func (p *probe) replaced() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listing = false
}

// nextPage is the page a LIST with opts asks for: 1 without a continue
// token, else one more than the last.
func (p *probe) nextPage(opts metav1.ListOptions) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if opts.Continue == "" {
		p.listPage = 1
	} else {
		p.listPage++
	}
	return p.listPage
}

// serveList answers a LIST from etcd, unless the scenario expired the
// next continuation (expire-continue): then it gets the 410 kube-apiserver
// gives once etcd has compacted the list's revision between pages (E4).
func (p *probe) serveList(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
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

// admit fails the call if the scenario asked for that (a LIST only at
// the page it named, if it named one), waits while disconnected, and
// holds a retry that would fail on a corrupt value again (holdRetries).
func (p *probe) admit(ctx context.Context, verb string, page int) error {
	p.mu.Lock()
	p.parked = false
	if code, ok := p.failNext[verb]; ok && (verb != "list" || p.failPage == 0 || p.failPage == page) {
		delete(p.failNext, verb)
		p.mu.Unlock()
		return statusError(code, verb)
	}
	if err := p.waitStale(ctx); err != nil {
		p.mu.Unlock()
		return err
	}
	held := p.held
	if held != nil {
		p.waiting++
	}
	p.mu.Unlock()
	if held == nil {
		return nil
	}
	p.rec.add(trace.LayerRequest, trace.KindRequest, "", "  -> waiting: disconnected")
	select {
	case <-held:
		// A reconnect and a cancel can come together (a stop ends the
		// informer's context): the cancel wins, whichever select saw.
		return ctx.Err()
	case <-ctx.Done():
		// Given up while held: no longer waiting (reconnect has not
		// zeroed the count, as held is still the same).
		p.mu.Lock()
		if p.held == held {
			p.waiting--
		}
		p.mu.Unlock()
		return ctx.Err()
	}
}

// statusError is the error kube-apiserver would return with code.
func statusError(code int, verb string) error {
	msg := fmt.Sprintf("injected by the scenario: %s failed", verb)
	switch code {
	case http.StatusGone:
		return apierrors.NewResourceExpired("too old resource version (" + msg + ")")
	case http.StatusTooManyRequests:
		return apierrors.NewTooManyRequests(msg, 1)
	default:
		return apierrors.NewGenericServerResponse(code, verb, listwatch.Pods.GroupResource(), "", msg, 0, true)
	}
}

// disconnect drops the open watches and holds every new call until
// reconnect.
func (p *probe) disconnect() {
	p.mu.Lock()
	if p.held == nil {
		p.held = make(chan struct{})
	}
	p.mu.Unlock()
	p.closeWatches()
}

// reconnect releases the waiting calls. They stop counting as waiting at
// once, so a settle that follows waits for what they bring.
func (p *probe) reconnect() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != nil {
		close(p.held)
		p.held = nil
		p.waiting = 0
	}
}

// closeWatches ends every open watch, as a server closing the stream
// does. The watches count as closed before this returns, so a settle
// that follows waits for the informer's next request.
func (p *probe) closeWatches() int {
	p.mu.Lock()
	ws := make([]*probeWatch, 0, len(p.open))
	for w := range p.open {
		ws = append(ws, w)
		delete(p.open, w)
	}
	p.mu.Unlock()
	for _, w := range ws {
		w.end()
	}
	return len(ws)
}

// connState is what settle needs to know about a connection.
type connState struct {
	open, waiting int  // open watches; calls held while disconnected
	parked        bool // waiting a re-watch backoff on the fake clock (after a 429)
	listing       bool // a LIST or watch-list was sent and cachelab has not reported its Replace
	askedBookmark bool // a bookmark a progress step asked for has not arrived
	relaying      bool // an event is between etcd and its trace line
	unapplied     bool // events handed over that cachelab has not reported applied
	expiring      bool // a watch's timeout has passed on the scenario's clock and it has not ended yet
}

func (p *probe) state() connState {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := connState{open: len(p.open), waiting: p.waiting + p.stalled, parked: p.parked, listing: p.listing,
		askedBookmark: p.showBooks > 0, relaying: p.inRelay > 0, unapplied: p.handed != p.handled}
	now := p.clock.Now()
	for w := range p.open {
		c.expiring = c.expiring || !w.deadline.IsZero() && !now.Before(w.deadline)
	}
	return c
}

// progressBlocker says why etcd would ignore a progress request on this
// connection now that it is at rev, or "" if every open watch will get a
// bookmark. etcd answers a progress request only when every watch on the
// client's stream has reached the revision it starts from (a watch opened
// at etcd's current revision starts at the next one, so it waits for a
// write), and a watch-list is not following etcd until its initial
// events are sent.
func (p *probe) progressBlocker(rev int64) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.open) == 0 {
		return "no watch is open on the connection, so there is nobody to notify"
	}
	ws := make([]*probeWatch, 0, len(p.open))
	for w := range p.open {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return ws[i].after < ws[j].after })
	for _, w := range ws {
		switch {
		case w.after < 0:
			return w.id + " is still sending its initial events and is not following etcd yet"
		case w.after >= rev:
			how, wait := "", "the next write"
			if w.resumed {
				how = " (etcd's client resumed it there after the restart)"
			}
			if w.after > rev {
				// etcd went back (a restore, a wipe): one write is not enough.
				wait = fmt.Sprintf("a write at rv %d", w.after+1)
			}
			return fmt.Sprintf("%s follows etcd from rv %d%s and etcd is at rv %d: etcd sends progress only once every watch "+
				"on a connection has reached the revision it starts at, so it waits for %s", w.id, w.after+1, how, rev, wait)
		}
	}
	return ""
}

// resumed notes that etcd restarted at revision rev under the open
// watches. etcd's client resumes each watch from one past the newest
// revision it had a response for, and a settled watch had one for every
// write up to rev: one that followed etcd from before rev now follows it
// from rev+1, and etcd ignores progress requests until the next write.
func (p *probe) resumed(rev int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for w := range p.open {
		if w.after >= 0 && w.after < rev {
			w.after, w.resumed = rev, true
		}
	}
}

// setFailNext makes the next LIST or WATCH fail with code; for a LIST,
// page > 0 makes only the request for that page of a list fail.
func (p *probe) setFailNext(verb string, code, page int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failNext[verb] = code
	if verb == "list" {
		p.failPage = page
	}
}

func (p *probe) setExpireContinue() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireContinue = true
}

// holdRetries is a LIST failing on a value the server cannot decode
// (E12). Every retry fails the same way until etcd changes, with the
// reflector's backoff growing on the real clock (to 30-60 s), so how
// many a step shows would be chance: the probe holds the next LIST or
// watch until the scenario writes to etcd (etcdChanged), and a side
// whose retry is held counts as settled.
func (p *probe) holdRetries() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stale == nil {
		p.stale = make(chan struct{})
	}
}

// waitStale waits, with p.mu held (it unlocks while waiting), while
// holdRetries holds calls.
func (p *probe) waitStale(ctx context.Context) error {
	stale := p.stale
	if stale == nil {
		return nil
	}
	p.stalled++
	p.mu.Unlock()
	p.rec.add(trace.LayerRequest, trace.KindRequest, "", "  -> held: it would fail on the same value; the simulator answers it after the next write to etcd")
	var err error
	select {
	case <-stale:
	case <-ctx.Done():
		err = ctx.Err()
	}
	p.mu.Lock()
	if p.stale == stale {
		p.stalled--
	}
	return err
}

// etcdChanged lets held retries through: the scenario wrote to etcd.
func (p *probe) etcdChanged() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stale != nil {
		close(p.stale)
		p.stale, p.stalled = nil, 0
	}
}

func (p *probe) showNextBookmark() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.showBooks++
}

// probeWatch relays one watch's events to the reflector. The hand-over is
// unbuffered, so an event is recorded when the reflector has taken it.
type probeWatch struct {
	id       string    // w1, w2, ...: names the watch in request and event lines
	deadline time.Time // when the server ends it (TimeoutSeconds); zero if never
	after    int64     // the revision it follows etcd from (guarded by p.mu); -1 while unknown
	resumed  bool      // etcd's client resumed it on a restarted etcd (guarded by p.mu)
	// initial is true while a watch-list's initial events come: from
	// the request until its end bookmark (relay's goroutine only).
	initial bool
	p       *probe
	ctx     context.Context // the request's: when it ends, the client ended the watch
	inner   watch.Interface
	out     chan watch.Event
	stop    chan struct{}
	once    sync.Once
	done    chan struct{}
}

func (w *probeWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop is the reflector ending the watch.
func (w *probeWatch) Stop() {
	w.p.mu.Lock()
	delete(w.p.open, w)
	w.p.mu.Unlock()
	w.end()
}

func (w *probeWatch) end() {
	w.once.Do(func() { close(w.stop) })
	w.inner.Stop()
	<-w.done
}

func (w *probeWatch) relay() {
	defer close(w.done)
	defer close(w.out)
	defer func() {
		w.p.mu.Lock()
		delete(w.p.open, w)
		w.p.mu.Unlock()
	}()
	in := w.inner.ResultChan()
	sawError := false
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-in:
		case <-w.stop:
			return
		}
		if !ok {
			select {
			case <-w.stop:
				// The probe (close-watch) or the reflector ended it: end
				// closes stop before it stops the inner watch, so this
				// case is certain here, where the select above may have
				// seen the closed stream first.
				return
			default:
			}
			if !sawError && w.ctx.Err() == nil {
				// After an Error event the reflector stops the watch
				// itself, racing the server's close, and a reflector
				// that is stopping cancels its request: only a close on
				// the server's own is a fact worth a line.
				why := ""
				if !w.deadline.IsZero() && !w.p.clock.Now().Before(w.deadline) {
					why = fmt.Sprintf(" (its timeout passed: the simulated server ends a watch after %v of scenario time)", maxWatchTimeout)
				}
				w.p.rec.record(trace.Event{Layer: trace.LayerWatch, Kind: trace.KindWatchEnd, Watch: w.id, Detail: w.id + " closed by the server" + why})
			}
			return
		}
		sawError = sawError || ev.Type == watch.Error
		// From here until the event is recorded, it is in flight: a settle
		// must not finish between the hand-over and the trace line.
		w.p.relaying(+1)
		select {
		case <-w.stop: // ended already: the event is not handed over
			w.p.relaying(-1)
			return
		default:
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			w.p.relaying(-1)
			return
		}
		w.p.recordEvent(w, ev)
		w.p.relaying(-1)
	}
}

func (p *probe) relaying(delta int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inRelay += delta
}

// recordEvent records an event the reflector has taken. A bookmark that
// answers the simulator's own progress request (sent while settling, when
// the informer's selectors filtered out a step's writes) says so.
func (p *probe) recordEvent(w *probeWatch, ev watch.Event) {
	p.handedOver(ev)
	id := w.id
	text := describeEvent(ev)
	if ev.Type == watch.Bookmark && isInitialEventsEnd(ev.Object) {
		if m, err := metaAccessor(ev.Object); err == nil {
			if rv, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64); err == nil {
				p.mu.Lock()
				w.after = rv
				p.mu.Unlock()
			}
		}
	}
	if ev.Type == watch.Bookmark && !isInitialEventsEnd(ev.Object) {
		p.mu.Lock()
		if p.showBooks > 0 {
			p.showBooks--
		} else {
			text += " (progress the simulator asked for, to settle)"
		}
		p.mu.Unlock()
		select {
		case p.progress <- struct{}{}:
		default:
		}
	}
	e := objectEvent(trace.LayerWatch, trace.KindEvent, string(ev.Type), ev.Object, text)
	e.Watch, e.Initial = id, w.initial && ev.Type != watch.Bookmark && ev.Type != watch.Error
	if isInitialEventsEnd(ev.Object) || ev.Type == watch.Error {
		w.initial = false
	}
	p.rec.record(e)
}

func isInitialEventsEnd(obj runtime.Object) bool {
	m, err := metaAccessor(obj)
	return err == nil && m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

func describeErr(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok {
		st := s.Status()
		return fmt.Sprintf("%d %s: %s", st.Code, st.Reason, st.Message)
	}
	return strings.TrimSpace(err.Error())
}

// handedOver counts an event given to the reflector; handledEvent counts
// one cachelab's reflector reports done. An Error event ends the watch
// without a store call, so it counts as handled at once.
func (p *probe) handedOver(ev watch.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handed++
	if ev.Type == watch.Error {
		p.handled++
	}
}

func (p *probe) handledEvent() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handled++
}
