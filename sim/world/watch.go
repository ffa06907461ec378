package world

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/sim/trace"
)

// connWatch relays one watch's events to the reflector. The hand-over is
// unbuffered, so an event is recorded when the reflector has taken it.
type connWatch struct {
	id       string    // w1, w2, ...: names the watch in request and event lines
	deadline time.Time // when the server ends it (TimeoutSeconds); zero if never
	after    int64     // the revision it follows etcd from (guarded by p.mu); -1 while unknown
	resumed  bool      // etcd's client resumed it on a restarted etcd (guarded by p.mu)
	// initial is true while a watch-list's initial events come: from
	// the request until its end bookmark (relay's goroutine only).
	initial bool
	// lose are the objects (ns/name) its initial events leave out
	// (lose.go); relay's goroutine only.
	lose    map[string]bool
	through int64 // events taken from inner and done with (guarded by p.mu)
	errored bool  // it has an ERROR event to hand over, or has handed one (guarded by p.mu)
	// endNote says what is ending it below its client (a cut TCP
	// connection, the server ending its response), for its end's wire
	// line; "" when nothing is (guarded by p.mu).
	endNote string
	server  Server // where it was opened (a later UseServer leaves it there)
	// call is the request that opened it, over the wire: its tries
	// (wiretries.go); none went out in process.
	call  *wireCall
	p     *Conn
	ctx   context.Context // the request's: when it ends, the client ended the watch
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
	done  chan struct{}
}

func (w *connWatch) ResultChan() <-chan watch.Event { return w.out }

// Stop is the reflector ending the watch.
func (w *connWatch) Stop() {
	w.p.mu.Lock()
	delete(w.p.open, w)
	w.p.mu.Unlock()
	w.end()
}

func (w *connWatch) end() {
	w.once.Do(func() { close(w.stop) })
	w.inner.Stop()
	<-w.done
}

func (w *connWatch) relay() {
	defer close(w.done)
	defer close(w.out)
	defer func() {
		w.p.mu.Lock()
		delete(w.p.open, w)
		w.p.mu.Unlock()
	}()
	in := w.inner.ResultChan()
	sawError := false
	w.p.mu.Lock()
	onCluster := w.p.cluster
	w.p.mu.Unlock()
	var timeUp <-chan time.Time
	if onCluster != nil && !w.deadline.IsZero() {
		t := onCluster.NewTimer(w.deadline.Sub(onCluster.Now()))
		defer t.Stop()
		timeUp = t.C()
	}
	for {
		var ev watch.Event
		var ok bool
		select {
		case ev, ok = <-in:
		case <-w.stop:
			return
		case <-timeUp:
			w.p.rec.Record(trace.Event{Layer: trace.LayerWatch, Kind: trace.KindWatchEnd, Watch: w.id,
				Detail: fmt.Sprintf("%s ended by the connection (its timeout passed: on a cluster, the connection ends a watch after %v of scenario time, as the simulated servers do)", w.id, maxWatchTimeout)})
			w.inner.Stop()
			return
		}
		if ok && onCluster != nil && ev.Type == watch.Bookmark && !trace.IsInitialEventsEnd(ev.Object) {
			w.p.rec.Record(trace.Event{Layer: trace.LayerSim, Kind: trace.KindWorld, Watch: w.id,
				Detail: w.id + " " + trace.DescribeEvent(ev) + " from the cluster, kept from the reflector (its timing is the cluster's wall clock's)"})
			continue
		}
		if ok && w.loses(ev) {
			continue
		}
		if !ok {
			select {
			case <-w.stop:
				// The connection (close-watch) or the reflector ended it: end
				// closes stop before it stops the inner watch, so this
				// case is certain here, where the select above may have
				// seen the closed stream first.
				return
			default:
			}
			w.p.mu.Lock()
			note := w.endNote
			w.p.mu.Unlock()
			if note != "" {
				w.p.rec.Record(trace.Event{Layer: trace.LayerWire, Kind: trace.KindWatchEnd, Watch: w.id, Detail: w.id + " " + note})
				return
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
				w.p.rec.Record(trace.Event{Layer: trace.LayerWatch, Kind: trace.KindWatchEnd, Watch: w.id, Detail: w.id + " closed by the server" + why})
			}
			return
		}
		sawError = sawError || ev.Type == watch.Error
		if ev.Type == watch.Error {
			w.p.mu.Lock()
			w.errored = true
			w.p.mu.Unlock()
		}
		// From here until the event is recorded, it is in flight: a settle
		// must not finish between the hand-over and the trace line.
		w.p.relaying(w, +1)
		select {
		case <-w.stop: // ended already: the event is not handed over
			w.p.relaying(w, -1)
			return
		default:
		}
		select {
		case w.out <- ev:
		case <-w.stop:
			w.p.relaying(w, -1)
			return
		case <-w.ctx.Done():
			// The client gave up the request without stopping the
			// watch, and reads no more: client-go's reflector, when the
			// data consistency detector panics in its watch-list, leaves
			// the stream open (REFERENCE.md F8, V6).
			w.p.relaying(w, -1)
			return
		}
		w.p.recordEvent(w, ev)
		if st, ok := ev.Object.(*metav1.Status); ok && ev.Type == watch.Error {
			if tries, _ := w.call.last(); tries > 0 {
				recordStreamError(w.p.rec, w.call, st)
			}
		}
		if w.p.countForCut(ev) {
			// The event the scenario's cut waited for (CutAfter):
			// handed over, and the watch ends with it.
			w.p.cut(w)
			w.p.relaying(w, -1)
			return
		}
		w.p.relaying(w, -1)
	}
}

// relaying counts an event of w in flight (+1) and through (-1).
func (p *Conn) relaying(w *connWatch, delta int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inRelay += delta
	if delta < 0 {
		w.through++
	}
}

// recordEvent records an event the reflector has taken. A bookmark that
// answers the simulator's own progress request (sent while settling, when
// the informer's selectors filtered out a step's writes) says so.
func (p *Conn) recordEvent(w *connWatch, ev watch.Event) {
	p.handedOver(ev)
	id := w.id
	text := trace.DescribeEvent(ev)
	if ev.Type == watch.Bookmark && trace.IsInitialEventsEnd(ev.Object) {
		if m, err := meta.Accessor(ev.Object); err == nil {
			if rv, err := strconv.ParseInt(m.GetResourceVersion(), 10, 64); err == nil {
				p.mu.Lock()
				w.after = rv
				p.mu.Unlock()
			}
		}
	}
	if ev.Type == watch.Bookmark && !trace.IsInitialEventsEnd(ev.Object) {
		p.mu.Lock()
		if p.showBooks > 0 {
			p.showBooks--
		} else {
			if _, replay := p.base.(ReplayServer); replay {
				text += " (the recorded server's, at its moment)"
			} else if cacheServed(p.base) {
				text += fmt.Sprintf(" (the watch cache's own, at %v)", p.clock.Now().Sub(p.born))
			} else {
				text += " (progress the simulator asked for, to settle)"
			}
		}
		p.mu.Unlock()
		select {
		case p.progress <- struct{}{}:
		default:
		}
	}
	e := trace.ObjectEvent(trace.LayerWatch, trace.KindEvent, string(ev.Type), ev.Object, text)
	e.Watch, e.Initial = id, w.initial && ev.Type != watch.Bookmark && ev.Type != watch.Error
	if st, ok := ev.Object.(*metav1.Status); ok && ev.Type == watch.Error {
		e.Status = int(st.Code)
	}
	if trace.IsInitialEventsEnd(ev.Object) || ev.Type == watch.Error {
		w.initial = false
	}
	p.rec.Record(e)
}

// DescribeErr is how a trace line names an error: an API status as
// "<code> <reason>: <message>", anything else as its text.
func DescribeErr(err error) string {
	if s, ok := err.(apierrors.APIStatus); ok {
		st := s.Status()
		return fmt.Sprintf("%d %s: %s", st.Code, st.Reason, st.Message)
	}
	return strings.TrimSpace(err.Error())
}

// handedOver counts an event given to the reflector; handledEvent counts
// one cachelab's reflector reports done. An Error event ends the watch
// without a store call, so it counts as handled at once.
func (p *Conn) handedOver(ev watch.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handed++
	if ev.Type == watch.Error {
		p.handled++
	}
}

func (p *Conn) HandledEvent() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handled++
}
