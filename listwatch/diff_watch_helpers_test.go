package listwatch_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/internal/testdeadline"
)

// The watch half of the differential tests: a WATCH opened on both
// sides (pair), each side's stream of events, and settling, which makes
// every open watch deliver everything written so far so the two streams
// can be compared.

// pair is one WATCH made on both sides, and what each delivered.
type pair struct {
	name    string
	opts    metav1.ListOptions
	sides   [2]*stream // listwatch, apiserver
	start   int64      // the first revision a watch from a resourceVersion can see
	initial bool       // the watch sends initial events
	opened  time.Time  // on the servers' clock
	tap     *tap       // what etcd handed listwatch's watches
	keys    string     // the resource's etcd key prefix

	differed bool // a difference was reported
}

// stream is one side's watch: the events it delivered, minus the
// progress bookmarks a test provoked to know it had them all.
type stream struct {
	w       watch.Interface
	lw      lister
	allowed bool // the request allowed bookmarks
	strict  bool // listwatch's side: a bookmark not allowed is an event
	events  []watch.Event
	ended   bool // an Error event, or the channel closed
	fence   func(testing.TB) int64
	synced  int64    // the last revision a bookmark confirmed
	log     []string // everything taken, progress bookmarks too, for messages
}

// story is everything the stream delivered, in order, for messages.
func (s *stream) story() string { return strings.Join(s.log, "; ") }

// watchBoth opens one WATCH on both sides, in namespace ns, and waits
// until kube-apiserver's storage has fixed the revision its initial
// events are read at (see settleStart). If either call fails, both
// errors are compared and nil is returned.
func (s *sides) watchBoth(t testing.TB, ns string, opts metav1.ListOptions) *pair {
	t.Helper()
	ctx := context.Background()
	ours, theirs := s.in(ns)
	wa, errA := ours.WatchWithContext(ctx, opts)
	wb, errB := theirs.WatchWithContext(ctx, opts)
	if errA != nil || errB != nil {
		if wa != nil {
			wa.Stop()
		}
		if wb != nil {
			wb.Stop()
		}
		if d := cmp.Diff(answerOf(nil, errB), answerOf(nil, errA)); d != "" || errA == nil || errB == nil {
			t.Errorf("WATCH %s: listwatch differs from kube-apiserver's storage (-apiserver +listwatch):\n%s\nlistwatch: %v\napiserver: %v", describeOpts(opts), d, errA, errB)
		}
		return nil
	}
	p := &pair{opts: opts, opened: s.clock.Now(), tap: s.tap, keys: "/registry/" + s.res.Resource + "/"}
	p.sides[0] = &stream{w: wa, lw: ours, allowed: opts.AllowWatchBookmarks, strict: true, fence: s.fence}
	p.sides[1] = &stream{w: wb, lw: theirs, allowed: opts.AllowWatchBookmarks, fence: s.fence}
	p.initial = initialEvents(opts)
	if rv, err := strconv.ParseInt(opts.ResourceVersion, 10, 64); err == nil && !p.initial {
		p.start = rv + 1
	}
	t.Cleanup(p.stop)
	s.settleStart(t, p, theirs)
	s.open = append(s.open, p)
	return p
}

// settleStart waits until kube-apiserver's storage has read the snapshot
// of a watch's initial events. listwatch fixes that revision when Watch
// is called; the etcd3 watcher a moment later, on its own goroutine
// (doc.go). A write in that moment would be an event on one side and
// part of the snapshot on the other, and a fence (settle) would move the
// initial-events-end bookmark. The watch's first event says the snapshot
// is read. A watch that will send none (no object matches, no bookmark)
// is settled with a fence instead: kube-apiserver's storage answers a
// progress request on it only once its etcd watch is open, after the
// snapshot, and a fence in its snapshot changes nothing it sends.
func (s *sides) settleStart(t testing.TB, p *pair, theirs lister) {
	t.Helper()
	if !p.initial {
		return
	}
	o := p.opts
	n := 0
	if l, err := theirs.ListWithContext(context.Background(), metav1.ListOptions{LabelSelector: o.LabelSelector, FieldSelector: o.FieldSelector}); err == nil {
		n = len(l.(*unstructured.UnstructuredList).Items)
	}
	// With the WatchList feature on, initial events end with a bookmark
	// if the client allowed them (a legacy watch is made a watch-list).
	if n > 0 || (o.AllowWatchBookmarks && s.ours.WatchListFeature()) {
		p.sides[1].readTo(t, math.MaxInt64, 1)
		return
	}
	p.sides[1].readTo(t, s.fence(t), -1)
}

// initialEvents reports whether a WATCH with opts sends initial events:
// asked for, or the legacy form (resourceVersion "" or "0", nothing said
// about initial events), which kube-apiserver makes a watch-list.
func initialEvents(o metav1.ListOptions) bool {
	if o.SendInitialEvents != nil {
		return *o.SendInitialEvents
	}
	return o.ResourceVersion == "" || o.ResourceVersion == "0"
}

// settle makes every open watch on both sides deliver everything written
// so far, and compares what they delivered. It writes a fence (a key
// outside /registry, which no watch sees) so that etcd's revision is
// past every watch's start: etcd answers a progress request only when
// every watch on the client's stream has reached its start revision.
func (s *sides) settle(t testing.TB) {
	t.Helper()
	rev := s.fence(t)
	for _, p := range s.open {
		if p.start > rev {
			continue // etcd has nothing for it yet
		}
		p.sync(t, rev)
	}
}

// fence writes the fence key until etcd's revision reaches every open
// watch's start, and returns that revision.
func (s *sides) fence(t testing.TB) int64 {
	t.Helper()
	need := int64(0)
	for _, p := range s.open {
		if !p.sides[0].ended || !p.sides[1].ended {
			need = max(need, p.start)
		}
	}
	for {
		resp, err := s.etcd.Client().Put(context.Background(), "/cachelab-fence", "")
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Revision >= need {
			return resp.Header.Revision
		}
	}
}

func (p *pair) stop() {
	for _, s := range p.sides {
		s.w.Stop()
	}
}

// sync reads each side's events until that side has delivered
// everything up to rev: a bookmark at rev or later (asked for with
// RequestProgress, which etcd answers only once every watch on the
// client has caught up, so it is asked again until it answers), or the
// end of the watch. listwatch sends no bookmark to a watch that did not
// allow them (kube-apiserver's storage does; see doc.go), so for that
// side sync reads as many events as kube-apiserver's storage gave.
// It then compares the two streams.
func (p *pair) sync(t testing.TB, rev int64) {
	t.Helper()
	p.sides[1].readTo(t, rev, -1)
	if p.sides[0].allowed {
		p.sides[0].readTo(t, rev, -1)
	} else {
		p.sides[0].readTo(t, rev, len(p.sides[1].events))
	}
	p.compare(t)
}

// compare reports any difference between the two streams so far, once
// per pair (a stream that differed goes on differing).
func (p *pair) compare(t testing.TB) {
	t.Helper()
	if p.differed {
		return
	}
	theirs := normalizeRetry(p.sides[1].events)
	if d := cmp.Diff(theirs, p.sides[0].events); d != "" {
		p.differed = true
		if p.etcdSkipped(theirs) {
			p.skip(t, d)
		}
		t.Errorf("WATCH %s %s: listwatch's events differ from kube-apiserver's storage (-apiserver +listwatch):\n%s\nlistwatch: %s\napiserver: %s",
			p.name, describeOpts(p.opts), d, p.sides[0].story(), p.sides[1].story())
		t.Logf("what etcd sent listwatch's watches:\n%s", p.tap)
	}
	if a, b := p.sides[0].ended, p.sides[1].ended; a != b {
		p.differed = true
		t.Errorf("WATCH %s %s: listwatch's watch ended: %v, kube-apiserver's: %v", p.name, describeOpts(p.opts), a, b)
	}
}

// normalizeRetry returns events with the retry time of a watch-list's
// "too large resource version" Error made 1 s if it is in [1, 3]: the
// etcd3 watcher draws it at random, int(wait.Jitter(1s, 3).Seconds())
// (etcd3/watcher.go startWatching), and listwatch gives 1, the lowest
// it can draw. Any other value, and every other field, is compared.
func normalizeRetry(events []watch.Event) []watch.Event {
	if events == nil {
		return nil
	}
	out := make([]watch.Event, len(events))
	for i, e := range events {
		out[i] = e
		st, ok := e.Object.(*metav1.Status)
		if !ok || st.Details == nil || len(st.Details.Causes) != 1 ||
			st.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge ||
			st.Details.RetryAfterSeconds < 1 || st.Details.RetryAfterSeconds > 3 {
			continue
		}
		c := st.DeepCopy()
		c.Details.RetryAfterSeconds = 1
		out[i].Object = c
	}
	return out
}

// readTo reads s until a bookmark confirms rev or the watch ends; with
// count >= 0, until it has count events instead.
func (s *stream) readTo(t testing.TB, rev int64, count int) {
	t.Helper()
	// Only the test binary's deadline bounds the wait (package
	// testdeadline): a guard against hangs, not a timing assumption.
	deadline := testdeadline.Context(t)
	unanswered := false
	for !s.ended && s.synced < rev && (count < 0 || len(s.events) < count) {
		if count < 0 {
			if unanswered {
				// A watch whose etcd start is past etcd's revision (its
				// snapshot took in the last fence) holds up every answer
				// on the stream: one more fence lets it through.
				s.fence(t)
			}
			if err := s.lw.RequestProgress(context.Background()); err != nil {
				t.Fatalf("RequestProgress: %v", err)
			}
		}
		// A progress request that etcd did not answer (some watch on the
		// client had not caught up) is asked again after this wait.
		retry := time.NewTimer(20 * time.Millisecond)
		select {
		case e, ok := <-s.w.ResultChan():
			s.take(e, ok)
			unanswered = false
		case <-retry.C:
			unanswered = true
		case <-deadline.Done():
			t.Fatalf("watch did not confirm revision %d by the test binary's deadline; got %d events: %s", rev, len(s.events), describeAll(s.events))
		}
		retry.Stop()
	}
}

// take records one event: progress bookmarks are the test's own probes
// and only move synced; every other event is kept for comparison.
func (s *stream) take(e watch.Event, open bool) {
	if open {
		s.log = append(s.log, describe(e))
	} else {
		s.log = append(s.log, "(closed)")
	}
	switch {
	case !open:
		s.ended = true
	case e.Type == watch.Error:
		s.events = append(s.events, e)
		s.ended = true
	case e.Type == watch.Bookmark && !isInitialEventsEnd(e.Object) && !s.allowed && s.strict:
		// listwatch sends no progress bookmark to a watch that did not
		// allow them (doc.go): keep it, so that it shows as a
		// difference. kube-apiserver's storage does send them; those
		// are dropped below.
		s.events = append(s.events, e)
	case e.Type == watch.Bookmark && !isInitialEventsEnd(e.Object):
		// Which progress requests etcd answered, and so how many of
		// these arrive, is timing; that one arrives, at which
		// revision, and for whom is compared by TestDiffE8Bookmarks.
		if rv := rvOf(e.Object.(*unstructured.Unstructured)); rv > s.synced {
			s.synced = rv
		}
	default:
		if e.Type == watch.Bookmark {
			s.synced = max(s.synced, rvOf(e.Object.(*unstructured.Unstructured)))
		}
		s.events = append(s.events, e)
	}
}

// nextProgress asks for progress until the watch answers with a
// bookmark at rev or later, and returns it. A bookmark below rev is the
// late answer to a progress request made before (settling asks again
// every 20ms until one is answered, and etcd may answer the others
// after): when it comes depends on etcd's timing, not on the side, so it
// is skipped. A CI run met one on kube-apiserver's side only.
func (s *stream) nextProgress(t testing.TB, rev int64) watch.Event {
	t.Helper()
	deadline := testdeadline.Context(t)
	for {
		if err := s.lw.RequestProgress(context.Background()); err != nil {
			t.Fatal(err)
		}
		retry := time.NewTimer(20 * time.Millisecond)
		select {
		case e, ok := <-s.w.ResultChan():
			retry.Stop()
			if !ok || e.Type != watch.Bookmark {
				t.Fatalf("waiting for a progress bookmark: %s (open %v)", describe(e), ok)
			}
			if u, isObj := e.Object.(*unstructured.Unstructured); isObj && rvOf(u) < rev {
				continue // a late answer to an earlier request
			}
			return e
		case <-retry.C:
		case <-deadline.Done():
			t.Fatal("no progress bookmark by the test binary's deadline")
		}
	}
}

func isInitialEventsEnd(obj runtime.Object) bool {
	u, ok := obj.(*unstructured.Unstructured)
	return ok && u.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}

func describeAll(events []watch.Event) string {
	out := ""
	for _, e := range events {
		out += describe(e) + "; "
	}
	return out
}

// etcdSkipped reports whether listwatch's stream is kube-apiserver's
// storage's with some events missing, each of which etcd's client never
// handed listwatch's etcd watch before vouching for its revision with a
// progress notification (tap.etcdSkipped). That is etcd's delivery, not
// listwatch's rules: the fuzzer met it every few minutes under load
// (etcd v3.7.3; each time an etcd watch created while etcd was already a
// revision or two past its start), it did not reproduce outside the
// fuzzer, and its cause is not understood (doc.go).
func (p *pair) etcdSkipped(theirs []watch.Event) bool {
	ours := p.sides[0].events
	j := 0
	for _, e := range theirs {
		if j < len(ours) && cmp.Equal(e, ours[j]) {
			j++
			continue
		}
		u, ok := e.Object.(*unstructured.Unstructured)
		if !ok || e.Type == watch.Bookmark || !p.tap.etcdSkipped(p.keys+u.GetNamespace()+"/"+u.GetName(), rvOf(u)) {
			return false
		}
	}
	return j == len(ours)
}

// skip ends a fuzz input that met etcdSkipped, noting it in the file
// CACHELAB_ETCD_SKIPS names (if set) so that a fuzz run can count them.
func (p *pair) skip(t testing.TB, diff string) {
	t.Helper()
	msg := fmt.Sprintf("WATCH %s %s: etcd handed listwatch's etcd watch a progress notification before events it never delivered:\n%s\n%s", p.name, describeOpts(p.opts), diff, p.tap)
	if f := os.Getenv("CACHELAB_ETCD_SKIPS"); f != "" {
		if out, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintf(out, "%s\n----\n", msg)
			out.Close()
		}
	}
	t.Skip(msg)
}
