package world

import (
	"context"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/trace"
)

// nextPage is the page a LIST with opts asks for: 1 without a continue
// token, else one more than the last.
func (p *Conn) nextPage(opts metav1.ListOptions) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if opts.Continue == "" {
		p.listPage = 1
	} else {
		p.listPage++
	}
	return p.listPage
}

// admit fails the call if the scenario asked for that (a LIST only at
// the page it named, if it named one), waits while disconnected, and
// holds a retry that would fail on a corrupt value again (holdRetries).
// watchID names the WATCH it admits ("" for a LIST): the answer lines it
// writes say whose they are.
func (p *Conn) admit(ctx context.Context, verb, watchID string, page int) error {
	if err := p.waitPaused(ctx); err != nil {
		return err
	}
	p.mu.Lock()
	p.parked = false
	if code, ok := p.failNext[verb]; ok && (verb != "list" || p.failPage == 0 || p.failPage == page) {
		delete(p.failNext, verb)
		p.mu.Unlock()
		return statusError(code, verb)
	}
	if err := p.waitStale(ctx, watchID); err != nil {
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
	p.rec.Record(trace.Event{Layer: trace.LayerRequest, Kind: trace.KindRequest, Op: "answer", Watch: watchID, Detail: "  -> waiting: disconnected"})
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

// Pause holds every call made from now on, with no trace line, until
// Resume. A lever that changes the server in two parts pauses the calls
// its first part causes until the second is done, so that they meet the
// server in one state on every run: a kube-apiserver restart ends every
// watch of the old watch cache, and the informers' immediate re-watches
// would reach the new one before or after it has listed etcd (429, or
// the list), by the scheduler's say. The lever resumes before its step
// settles, so the wait is never seen.
func (p *Conn) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused == nil {
		p.paused = make(chan struct{})
	}
}

// Resume lets the calls Pause held go on, in the state the lever left
// the server in.
func (p *Conn) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused != nil {
		close(p.paused)
		p.paused = nil
	}
}

// waitPaused waits while the calls are paused (Pause), or until ctx ends.
func (p *Conn) waitPaused(ctx context.Context) error {
	p.mu.Lock()
	paused := p.paused
	p.mu.Unlock()
	if paused == nil {
		return nil
	}
	select {
	case <-paused:
		return nil
	case <-ctx.Done():
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

// Disconnect drops the open watches and holds every new call until
// reconnect.
func (p *Conn) Disconnect() {
	p.mu.Lock()
	if p.held == nil {
		p.held = make(chan struct{})
	}
	p.mu.Unlock()
	p.closeOpen()
}

// Unplug is a disconnect whose break is below the HTTP clients: a proxy
// between them and the server cuts their TCP connections (package
// tcpproxy). Every new call waits until Reconnect, as after Disconnect;
// the open watches are left to meet the break through their clients,
// each ending with a wire line that says so. Cut the connections after
// Unplug, then call the function it returns: it waits until each of
// those watches has ended, so that, as after Disconnect, a settle that
// follows waits for the informer's next request.
func (p *Conn) Unplug() (ended func()) {
	return p.expectEnds("ended: its TCP connection was cut, and its client took the reset as the end of the stream", true)
}

// expectEnds marks the open watches as about to end below the clients,
// each to be told with note, and holds every new call until Reconnect
// if hold. The function it returns waits until each has ended; a watch
// whose client has not read its end within cutGrace is ended by the
// connection, saying so.
func (p *Conn) expectEnds(note string, hold bool) (ended func()) {
	p.mu.Lock()
	if hold && p.held == nil {
		p.held = make(chan struct{})
	}
	ws := make([]*connWatch, 0, len(p.open))
	for w := range p.open {
		w.endNote = note
		ws = append(ws, w)
	}
	p.mu.Unlock()
	return func() {
		grace := time.NewTimer(cutGrace)
		defer grace.Stop()
		for _, w := range ws {
			select {
			case <-w.done:
				continue
			case <-grace.C:
			}
			p.mu.Lock()
			delete(p.open, w)
			p.mu.Unlock()
			p.rec.Record(trace.Event{Layer: trace.LayerWire, Kind: trace.KindWatchEnd, Watch: w.id,
				Detail: fmt.Sprintf("%s: its client did not read its end within %v; the connection ends it", w.id, cutGrace)})
			w.end()
		}
	}
}

// cutGrace is how long, on the wall clock, a watch has to end after what
// ends it below its client: a client reads the end of its stream at
// once, and this only bounds a run whose client would not.
const cutGrace = 10 * time.Second

// Reconnect releases the waiting calls. They stop counting as waiting at
// once, so a settle that follows waits for what they bring.
func (p *Conn) Reconnect() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != nil {
		close(p.held)
		p.held = nil
		p.waiting = 0
	}
}

// takeOpen takes every open watch out of the connection's set, with
// p.mu held: they count as closed from then on, and the caller ends them.
func (p *Conn) takeOpen() []*connWatch {
	ws := make([]*connWatch, 0, len(p.open))
	for w := range p.open {
		ws = append(ws, w)
		delete(p.open, w)
	}
	return ws
}

// CloseWatches ends every open watch, as a server closing the stream
// does. The watches count as closed before this returns, so a settle
// that follows waits for the informer's next request. Where the
// informers talk HTTP, the watches' responses are ended where they are
// served (a responseCloser: kube-apiserver in process, the run's proxy in
// front of a cluster), and each ends as its client reads that, with a
// wire line; elsewhere the connection ends them (closeOpen).
func (p *Conn) CloseWatches() int {
	p.mu.Lock()
	closers := map[responsesOf]func(){}
	note := ""
	for w := range p.open {
		rc, ok := w.server.(responseCloser)
		if !ok {
			closers = nil
			break
		}
		key, by, closeAll := rc.responses()
		closers[key], note = closeAll, by
	}
	n := len(p.open)
	p.mu.Unlock()
	if len(closers) == 0 {
		return p.closeOpen()
	}
	ended := p.expectEnds("ended: "+note+" ended its response, and its client read the end of the stream", false)
	for _, closeAll := range closers {
		closeAll()
	}
	ended()
	return n
}

// A responseCloser is a Server that can end the side's watch responses
// where they are served over HTTP. responses returns what names them
// there (so that a side's watches on one server are ended once), who
// ends them ("the server", "the run's proxy"), and the function that
// ends them all.
type responseCloser interface {
	responses() (key responsesOf, by string, closeAll func())
}

// responsesOf names one side's watch responses: where they are served,
// and the side's name there.
type responsesOf struct {
	at   any
	side string
}

// responses: kube-apiserver ends the user's watch responses.
func (s *WireServer) responses() (responsesOf, string, func()) {
	return responsesOf{s.srv, s.user}, "the server", func() { s.srv.CloseWatches(s.user) }
}

// closeOpen ends every open watch at the connection, above the client.
func (p *Conn) closeOpen() int {
	p.mu.Lock()
	ws := p.takeOpen()
	p.mu.Unlock()
	for _, w := range ws {
		w.end()
	}
	return len(ws)
}

// CutAfter arms a fault inside a step: once the connection's watches
// have handed the informer n more object events (ADDED, MODIFIED or
// DELETED; bookmarks and errors do not count), right after the n-th is
// taken, every open watch ends: dropped, with the calls that follow
// held until Reconnect (drop), or closed by the server, as CloseWatches
// closes them. The count is the connection's own, so each informer is
// cut after the same event of the stream the server sends it. Disarm
// ends an arming that has not fired.
func (p *Conn) CutAfter(n int, drop bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutLeft, p.cutDrop, p.cutEvents = n, drop, n
}

// CutAfterPages arms a drop between a paged LIST's pages: once the
// connection has answered n more LIST pages that have more pages to
// come, right after the n-th, it drops as CutAfter's drop does, and the
// request for the next page (with its continue token) waits for
// Reconnect. The count is the connection's own, over all its LISTs (a
// step may relist twice), so each informer is cut after the same page.
// Disarm ends an arming that has not fired.
func (p *Conn) CutAfterPages(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutPages = n
}

// Disarm ends an armed cut that has not fired, and reports whether one
// was armed.
func (p *Conn) Disarm() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	armed := p.cutLeft > 0 || p.cutPages > 0
	p.cutLeft, p.cutPages = 0, 0
	return armed
}

// cutBetweenPages counts a LIST page just answered, with more to come,
// against a drop armed between pages (CutAfterPages), and if it was the
// last before it, drops the connection (Disconnect) before the page is
// returned: the request for the next page waits.
func (p *Conn) cutBetweenPages() {
	p.mu.Lock()
	fire := false
	if p.cutPages > 0 {
		p.cutPages--
		fire = p.cutPages == 0
	}
	page := p.listPage
	p.mu.Unlock()
	if !fire {
		return
	}
	p.rec.Record(trace.Event{Layer: trace.LayerRequest, Kind: trace.KindRequest, Op: "answer",
		Detail: fmt.Sprintf("  -> connection lost after page %d of this LIST: watches dropped, new requests wait", page)})
	p.Disconnect()
}

// countForCut counts an object event handed over against an armed cut,
// and reports whether it was the last before the cut.
func (p *Conn) countForCut(ev watch.Event) bool {
	if ev.Type != watch.Added && ev.Type != watch.Modified && ev.Type != watch.Deleted {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cutLeft == 0 {
		return false
	}
	p.cutLeft--
	return p.cutLeft == 0
}

// cut carries out the armed cut from the relay of watch self, which has
// just handed over the event that fired it: self ends when its relay
// returns; every other watch is ended here, as CloseWatches ends them.
func (p *Conn) cut(self *connWatch) {
	p.mu.Lock()
	drop := p.cutDrop
	if drop && p.held == nil {
		p.held = make(chan struct{})
	}
	ws := p.takeOpen()
	n := p.cutEvents
	p.mu.Unlock()
	what := fmt.Sprintf("the server closes the watch after %d watch %s of this step", n, plural(n, "event", "events"))
	if drop {
		what = fmt.Sprintf("connection lost after %d watch %s of this step: watches dropped, new requests wait", n, plural(n, "event", "events"))
	}
	p.rec.Record(trace.Event{Layer: trace.LayerWatch, Kind: trace.KindWatchEnd, Watch: self.id, Detail: self.id + " ends: " + what})
	for _, w := range ws {
		if w != self {
			w.end()
		}
	}
	self.once.Do(func() { close(self.stop) })
	self.inner.Stop()
}

func plural(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}

// SetFailNext makes the next LIST or WATCH fail with code; for a LIST,
// page > 0 makes only the request for that page of a list fail.
func (p *Conn) SetFailNext(verb string, code, page int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failNext[verb] = code
	if verb == "list" {
		p.failPage = page
	}
}

func (p *Conn) SetExpireContinue() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireContinue = true
}

// holdRetries is a LIST failing on a value the server cannot decode
// (E12). Every retry fails the same way until etcd changes, with the
// reflector's backoff growing on the real clock (to 30-60 s), so how
// many a step shows would be chance: the connection holds the next LIST or
// watch until the scenario has changed etcd (EtcdChanged, which the
// simulator calls once a step's writes are all made), and a side whose
// retry is held counts as settled.
//
// An unready watch cache (C5) is the same story: every LIST the reflector
// retries gets 429 until the cache has listed etcd, so the retry waits
// for the scenario to change the world (a write, release-cache).
func (p *Conn) holdRetries(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stale == nil {
		p.stale = make(chan struct{})
	}
	p.staleWhy = why
}

// Why a held retry is held (holdRetries).
const (
	heldCorrupt = "it would fail on the same value; the simulator answers it after the next write to etcd"
	heldUnready = "the watch cache is not ready; the simulator answers it after the next change (release-cache, a write to etcd)"
)

// waitStale waits, with p.mu held (it unlocks while waiting), while
// holdRetries holds calls; watchID names the WATCH held ("" for a LIST).
func (p *Conn) waitStale(ctx context.Context, watchID string) error {
	stale := p.stale
	if stale == nil {
		return nil
	}
	p.stalled++
	p.mu.Unlock()
	p.rec.Record(trace.Event{Layer: trace.LayerRequest, Kind: trace.KindRequest, Op: "answer", Watch: watchID,
		Detail: "  -> held: " + p.staleWhy})
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

// EtcdChanged lets held retries through: the scenario wrote to etcd (or
// changed the watch cache).
func (p *Conn) EtcdChanged() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stale != nil {
		close(p.stale)
		p.stale, p.stalled = nil, 0
	}
}

func (p *Conn) ShowNextBookmark() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.showBooks++
}
