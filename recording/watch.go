package recording

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// scriptWatch is one watch of a Server: its first events (a watch-list's
// initial events, or a 410), then its segment's changes after from, each
// at its moment, until it ends.
type scriptWatch struct {
	s         *Server
	ctx       context.Context
	seg       int // the segment it watches
	from      int64
	bookmarks bool
	began     time.Duration
	deadline  time.Duration // -1: none
	first     []watch.Event
	ended     bool // after first

	out  chan watch.Event
	stop chan struct{}
	once sync.Once

	// handed counts the events the reader has taken (Handed); parked
	// and until say that run waits for the clock to reach moment until
	// (never: nothing more will come), with nothing due before it.
	handed atomic.Int64
	mu     sync.Mutex
	parked bool
	until  time.Duration
}

// never is a moment no clock reaches.
const never = time.Duration(1<<63 - 1)

// Handed is how many events the watch's reader has taken: a reader that
// counts what it has passed on knows, by comparing, that it has passed
// on everything (world.Conn's Delivered).
func (w *scriptWatch) Handed() int64 { return w.handed.Load() }

// quiet reports whether the watch has nothing due at now: it waits for a
// later moment.
func (w *scriptWatch) quiet(now time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.parked && w.until > now
}

func (w *scriptWatch) park(until time.Duration) {
	w.mu.Lock()
	w.parked, w.until = true, until
	w.mu.Unlock()
}

func (w *scriptWatch) unpark() {
	w.mu.Lock()
	w.parked = false
	w.mu.Unlock()
}

func (w *scriptWatch) ResultChan() <-chan watch.Event { return w.out }

func (w *scriptWatch) Stop() { w.once.Do(func() { close(w.stop) }) }

// run sends the watch's events until it ends: at each next moment (a
// change, a recorded watch error, a newer segment, the deadline) it waits
// for the clock, then sends what is due.
func (w *scriptWatch) run() {
	defer func() {
		w.s.mu.Lock()
		delete(w.s.watches, w)
		w.s.mu.Unlock()
		close(w.out)
	}()
	for _, ev := range w.first {
		if !w.send(ev) {
			return
		}
	}
	if w.ended {
		return
	}
	seg := w.s.h.Segments[w.seg]
	next := 0 // the next change to send
	for next < len(seg.Changes) && seg.Changes[next].RV <= w.from {
		next++
	}
	for {
		due, what := w.nextMoment(seg, next)
		if what == "" {
			w.park(never)
			select { // nothing more will come: until the informer ends it
			case <-w.stop:
			case <-w.ctx.Done():
			}
			return
		}
		if !w.wait(due) {
			return
		}
		switch what {
		case "change":
			c := seg.Changes[next]
			next++
			if c.Type == "BOOKMARK" && !w.bookmarks {
				continue
			}
			ev := watch.Event{Type: watch.EventType(c.Type), Object: w.s.object(c.Object)}
			if c.Type == "BOOKMARK" {
				ev = w.s.bookmark(c.RV, false)
			}
			if !w.send(ev) {
				return
			}
		case "error":
			w.send(watch.Event{Type: watch.Error, Object: status(w.errorAt(seg, due).Status)})
			return
		case "gap":
			w.send(gone(fmt.Sprintf("too old resource version: %d (the recording has a gap here: the recorded informer listed again at %v)", w.from, due)))
			return
		case "deadline":
			return // its timeoutSeconds passed: the stream ends cleanly
		}
	}
}

// nextMoment is the watch's next moment and what comes then, "" if
// nothing will. At one moment a change comes before a watch error, and
// both before a newer segment and the deadline. A watch error before the
// watch began is not its (one at the same moment neither: the informer
// that got it watches again only once its backoff has passed).
func (w *scriptWatch) nextMoment(seg *Segment, next int) (time.Duration, string) {
	due, what := time.Duration(-1), ""
	consider := func(at time.Duration, name string) {
		if what == "" || at < due {
			due, what = at, name
		}
	}
	if next < len(seg.Changes) {
		consider(seg.Changes[next].At, "change")
	}
	for _, e := range seg.Errors {
		if e.At > w.began {
			consider(e.At, "error")
			break
		}
	}
	if w.seg+1 < len(w.s.h.Segments) {
		consider(w.s.h.Segments[w.seg+1].At, "gap")
	}
	if w.deadline >= 0 {
		consider(w.deadline, "deadline")
	}
	return due, what
}

func (w *scriptWatch) errorAt(seg *Segment, at time.Duration) WatchError {
	for _, e := range seg.Errors {
		if e.At == at {
			return e
		}
	}
	return WatchError{}
}

// wait waits until the clock reaches moment at; false if the watch was
// stopped first.
func (w *scriptWatch) wait(at time.Duration) bool {
	d := at - w.s.Now()
	if d <= 0 {
		return true
	}
	t := w.s.clk.NewTimer(d)
	defer t.Stop()
	w.park(at)
	defer w.unpark()
	select {
	case <-t.C():
		return true
	case <-w.stop:
	case <-w.ctx.Done():
	}
	return false
}

func (w *scriptWatch) send(ev watch.Event) bool {
	select {
	case w.out <- ev:
		w.handed.Add(1)
		return true
	case <-w.stop:
	case <-w.ctx.Done():
	}
	return false
}

// status is a recorded ERROR's Status as the server sends it.
func status(m map[string]any) runtime.Object {
	st := &metav1.Status{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, st); err != nil || st.Code == 0 {
		st = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
			Reason: metav1.StatusReasonInternalError, Message: fmt.Sprintf("a recorded watch error: %v", m)}
	}
	st.Kind, st.APIVersion = "Status", "v1"
	return st
}
