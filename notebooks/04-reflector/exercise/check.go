package exercise

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/notebooks/internal/lab"
)

// Yours is the decision in this package.
var Yours = AfterWatch

// endings are the ways a watch ends that the lab checks. Each WatchEnd is
// both the question put to your AfterWatch and the script played against
// client-go (see prepare): a reflector synced at resourceVersion 2, with
// its watch just opened.
//
// client-go: reflector.go RunWithContext, watch, handleAnyWatch (F4).
var endings = []struct {
	behaviour string
	end       WatchEnd
}{
	{"closed normally after events", WatchEnd{Events: 1, Lasted: 5 * time.Minute, LastSyncedRV: "3"}},
	{"closed in under 1 s, no events", WatchEnd{Lasted: 500 * time.Millisecond, LastSyncedRV: "2"}},
	{"closed after exactly 1 s, no events", WatchEnd{Lasted: time.Second, LastSyncedRV: "2"}},
	{"closed in under 1 s, after an event", WatchEnd{Events: 1, Lasted: 200 * time.Millisecond, LastSyncedRV: "3"}},
	{"Error 410 Gone in the stream", WatchEnd{Status: http.StatusGone, Events: 1, Lasted: 30 * time.Second, LastSyncedRV: "3"}},
	{"Error 500 in the stream", WatchEnd{Status: http.StatusInternalServerError, Lasted: 10 * time.Second, LastSyncedRV: "2"}},
	{"Error 429 in the stream, at once", WatchEnd{Status: http.StatusTooManyRequests, LastSyncedRV: "2"}},
	{"the Watch call fails with 429", WatchEnd{Status: http.StatusTooManyRequests, FromWatchCall: true, LastSyncedRV: "3"}},
	{"the Watch call fails with 410", WatchEnd{Status: http.StatusGone, FromWatchCall: true, LastSyncedRV: "3"}},
}

// Checks are the behaviours the lab checks: for each way a watch can end,
// client-go's reflector (with its default feature gates, so its relists
// are watch-list requests) is run against a scripted server inside a
// testing/synctest bubble (fake time, so a backoff is seen as time passing
// before the next request), the watch is ended that way, and client-go's
// next request is compared with what afterWatch decides.
//
// The caller's TestMain must call difftest.Quiet: client-go reports errors
// through utilruntime, whose default handlers would sleep inside a bubble.
func Checks(t *testing.T, afterWatch func(WatchEnd) Next) []lab.Check {
	checks := make([]lab.Check, len(endings))
	for i, e := range endings {
		checks[i] = lab.Check{ID: "F4", Behaviour: e.behaviour, Run: func() error {
			want, err := observe(t, e.end)
			if err != nil {
				return err
			}
			return compare(e.end, want, afterWatch(e.end))
		}}
	}
	return checks
}

// observed is client-go's next request after the ending.
type observed struct {
	next    Next
	request string        // the request as sent
	waited  time.Duration // fake time between the ending and the request
}

// observe runs client-go's reflector in a bubble, plays end against it and
// returns the request it makes next.
func observe(t *testing.T, end WatchEnd) (observed, error) {
	var got observed
	var err error
	synctest.Test(t, func(*testing.T) {
		srv := difftest.NewServer()
		srv.Write(watch.Added, difftest.Pod("ns/a")) // resourceVersion 2
		r := cache.NewReflectorWithOptions(srv, &unstructured.Unstructured{},
			cache.NewStore(cache.MetaNamespaceKeyFunc), cache.ReflectorOptions{Name: "lab"})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); r.RunWithContext(ctx) }()
		defer func() { cancel(); <-done }()
		synctest.Wait() // synced at 2, watching
		endWatch := prepare(srv, end)
		ended, seen := time.Now(), len(srv.Requests())
		endWatch()
		synctest.Wait()
		time.Sleep(time.Minute) // a first backoff step is under 2 s
		got, err = nextRequest(srv.Requests()[seen:], ended)
	})
	return got, err
}

// prepare plays end against client-go's open watch on s, up to the moment
// the watch ends, and returns what ends it.
func prepare(s *difftest.Server, end WatchEnd) (endWatch func()) {
	if end.FromWatchCall {
		// End the open watch normally after an event, so that client-go
		// watches again at once; that Watch call fails, and is the end.
		s.FailNextWatch(statusError(end.Status))
		s.Write(watch.Modified, difftest.Pod("ns/a"))
		s.CloseWatches()
		synctest.Wait()
		return func() {}
	}
	for range end.Events {
		s.Write(watch.Modified, difftest.Pod("ns/a"))
	}
	time.Sleep(end.Lasted)
	if end.Status == 0 {
		return s.CloseWatches
	}
	return func() { s.BreakWatches(&statusError(end.Status).ErrStatus) }
}

func statusError(code int) *apierrors.StatusError {
	switch code {
	case http.StatusGone:
		return apierrors.NewResourceExpired("too old resource version: 1 (2)")
	case http.StatusTooManyRequests:
		return apierrors.NewTooManyRequests("slow down", 1)
	case http.StatusInternalServerError:
		return apierrors.NewInternalError(fmt.Errorf("etcd hiccup"))
	}
	return apierrors.NewGenericServerResponse(code, "watch", schema.GroupResource{Resource: "pods"}, "", "injected", 0, false)
}

// nextRequest reads client-go's first request after the ending.
func nextRequest(reqs []difftest.Request, ended time.Time) (observed, error) {
	if len(reqs) == 0 {
		return observed{}, fmt.Errorf("the lab's harness saw client-go send no request for a minute after the watch ended")
	}
	r := reqs[0]
	o := observed{waited: r.At.Sub(ended), request: describe(r)}
	o.next = Next{Action: Rewatch, Backoff: o.waited > 0, ResourceVersion: r.Opts.ResourceVersion}
	if r.Verb == "list" || (r.Opts.SendInitialEvents != nil && *r.Opts.SendInitialEvents) {
		o.next.Action = Relist
	}
	return o, nil
}

func describe(r difftest.Request) string {
	switch {
	case r.Verb == "list":
		return fmt.Sprintf("LIST rv=%q", r.Opts.ResourceVersion)
	case r.Opts.SendInitialEvents != nil && *r.Opts.SendInitialEvents:
		return fmt.Sprintf("a watch-list request, WATCH rv=%q sendInitialEvents=true", r.Opts.ResourceVersion)
	}
	return fmt.Sprintf("WATCH rv=%q", r.Opts.ResourceVersion)
}

// compare says, in plain words, how yours differs from client-go's.
func compare(end WatchEnd, want observed, got Next) error {
	if got == want.next {
		return nil
	}
	return fmt.Errorf("%s,\nclient-go %s (its next request: %s);\nyour AfterWatch said: %s",
		story(end), did(want), want.request, decision(got))
}

func story(end WatchEnd) string {
	events := "no events"
	switch {
	case end.Events == 1:
		events = "1 event"
	case end.Events > 1:
		events = fmt.Sprintf("%d events", end.Events)
	}
	switch {
	case end.FromWatchCall:
		return fmt.Sprintf("when the Watch call failed with %d (last synced RV %q)", end.Status, end.LastSyncedRV)
	case end.Status != 0:
		return fmt.Sprintf("when an Error %d event ended the watch after %v, with %s (last synced RV %q)",
			end.Status, end.Lasted, events, end.LastSyncedRV)
	}
	return fmt.Sprintf("when the server closed the watch normally after %v, with %s (last synced RV %q)",
		end.Lasted, events, end.LastSyncedRV)
}

func did(o observed) string {
	verb := map[Action]string{Rewatch: "watched again", Relist: "relisted"}[o.next.Action]
	when := "at once"
	if o.next.Backoff {
		when = fmt.Sprintf("after waiting a backoff delay (%v)", o.waited.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s %s, from rv %q", verb, when, o.next.ResourceVersion)
}

func decision(n Next) string {
	verb, ok := map[Action]string{Rewatch: "watch again", Relist: "relist"}[n.Action]
	switch {
	case n.Action == 0:
		return "nothing (Next.Action is not set)"
	case !ok:
		return fmt.Sprintf("Action %d, which is neither Rewatch nor Relist", n.Action)
	}
	when := "at once"
	if n.Backoff {
		when = "after a backoff delay"
	}
	return fmt.Sprintf("%s %s, from rv %q", verb, when, n.ResourceVersion)
}
