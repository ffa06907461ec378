package listwatch_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/listwatch"
)

// The differential tests send the same LIST and WATCH requests to two
// kube-apiservers without a watch cache over ONE etcd: listwatch's
// (cachelab's, from scratch) and apistorage's (k8s.io/apiserver v0.37.2's
// etcd3 store behind a copy of its REST handler and generic registry).
// Every answer, item, continue token, error Status and watch event is
// compared with go-cmp. Each side has its own etcd client, as two
// kube-apiservers would, so that a progress request one side makes
// (RequestProgress) is answered on that side's watches only.
//
//	            ┌── client A ── listwatch.ListerWatcher ──┐
//	Writer ──► etcd                                       ├── same request, cmp.Diff
//	            └── client B ── apistorage (Cache: false) ─┘

// lister is what both ListerWatchers offer a test.
type lister interface {
	ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	RequestProgress(ctx context.Context) error
}

// sides is one etcd served by both implementations.
type sides struct {
	etcd   *listwatch.Embedded
	res    listwatch.Resource
	w      *listwatch.Writer
	clock  *clocktesting.FakeClock
	ours   *listwatch.ListerWatcher
	theirs *apistorage.ListerWatcher
	open   []*pair // watches settle reads
}

var diffEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newSides starts an etcd for one test and both servers over it.
func newSides(t testing.TB) *sides {
	t.Helper()
	e := startEtcd(t)
	return serveBoth(t, e, listwatch.Pods, connectTo(context.Background(), t, e), connectTo(context.Background(), t, e))
}

// serveBoth builds both servers for res over e, each on its own client.
func serveBoth(t testing.TB, e *listwatch.Embedded, res listwatch.Resource, ours, theirs *clientv3.Client) *sides {
	t.Helper()
	clk := clocktesting.NewFakeClock(diffEpoch)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := apistorage.New(ctx, theirs, res, apistorage.Options{Cache: false, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	n := 0
	w := listwatch.NewWriter(e.Client(), res, listwatch.WriterOptions{
		NewUID: func() types.UID { n++; return types.UID(fmt.Sprintf("uid-%d", n)) },
		Now:    func() time.Time { return diffEpoch },
	})
	return &sides{etcd: e, res: res, w: w, clock: clk,
		ours:   listwatch.NewListerWatcher(ours, res, listwatch.Options{Clock: clk}),
		theirs: srv.ListerWatcher("")}
}

// in returns both sides' ListerWatchers for one namespace ("" for all).
func (s *sides) in(ns string) (ours, theirs lister) {
	return s.ours.WithNamespace(ns), s.theirs.WithNamespace(ns)
}

func (s *sides) rev(t testing.TB) int64 {
	t.Helper()
	r, err := s.etcd.Revision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// answer is what a request got, in a form go-cmp can compare whole: the
// object, or the error's full Status (or its text, for an error that has
// no Status), and the continue token decoded, so that a diff shows which
// of its fields differ and not only that the base64 does.
type answer struct {
	List   *unstructured.UnstructuredList
	Status *metav1.Status
	Err    string
	Token  map[string]any
}

func answerOf(obj runtime.Object, err error) answer {
	var a answer
	var status apierrors.APIStatus
	switch {
	case errors.As(err, &status):
		st := status.Status()
		a.Status = &st
		a.Token = decodeToken(st.Continue)
	case err != nil:
		a.Err = err.Error()
	default:
		a.List = obj.(*unstructured.UnstructuredList)
		a.Token = decodeToken(a.List.GetContinue())
	}
	return a
}

// decodeToken opens a continue token (base64url JSON, k8s.io/apiserver's
// storage/continue.go); nil for none.
func decodeToken(token string) map[string]any {
	if token == "" {
		return nil
	}
	out := map[string]any{}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return map[string]any{"undecodable": err.Error()}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return map[string]any{"undecodable": err.Error()}
	}
	return out
}

// listBoth sends one LIST to both sides and reports any difference; it
// returns our answer, for a test to continue from (its continue token).
func listBoth(t testing.TB, ours, theirs lister, opts metav1.ListOptions) answer {
	t.Helper()
	ctx := context.Background()
	a, b := answerOf(ours.ListWithContext(ctx, opts)), answerOf(theirs.ListWithContext(ctx, opts))
	dropEmptyContinue(b.List)
	if d := cmp.Diff(b, a); d != "" {
		t.Errorf("LIST %s: listwatch differs from kube-apiserver's storage (-apiserver +listwatch):\n%s", describeOpts(opts), d)
	}
	return a
}

// dropEmptyContinue removes `continue: ""` from a complete list's
// metadata. The etcd3 store sets the token on every list it returns
// (APIObjectVersioner.UpdateList calls SetContinue, even with ""), and
// on an UnstructuredList that makes a key; a PodList, which is what a pod
// client gets over the wire, has omitempty there, so no key. listwatch
// answers as for pods. Only the empty value is dropped: a real token is
// compared.
func dropEmptyContinue(l *unstructured.UnstructuredList) {
	if l == nil {
		return
	}
	if md, ok := l.Object["metadata"].(map[string]any); ok && md["continue"] == "" {
		delete(md, "continue")
	}
}

// describeOpts renders the options a request set, for messages and
// for reading a fuzzer's failing sequence.
func describeOpts(o metav1.ListOptions) string {
	b, _ := json.Marshal(o)
	return string(b)
}

// pair is one WATCH made on both sides, and what each delivered.
type pair struct {
	name    string
	opts    metav1.ListOptions
	sides   [2]*stream // listwatch, apiserver
	start   int64      // the first revision a watch from a resourceVersion can see
	initial bool       // the watch sends initial events

	differed bool // a difference was reported
}

// stream is one side's watch: the events it delivered, minus the
// progress bookmarks a test provoked to know it had them all.
type stream struct {
	w       watch.Interface
	lw      lister
	allowed bool // the request allowed bookmarks
	events  []watch.Event
	ended   bool // an Error event, or the channel closed
	fence   func(testing.TB) int64
	synced  int64 // the last revision a bookmark confirmed
}

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
	p := &pair{opts: opts}
	p.sides[0] = &stream{w: wa, lw: ours, allowed: opts.AllowWatchBookmarks, fence: s.fence}
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
	if n > 0 || o.AllowWatchBookmarks {
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

// syncWait bounds how long a watch may take to confirm a revision; it is
// a guard against hangs, not a timing assumption.
const syncWait = 10 * time.Second

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
		t.Errorf("WATCH %s %s: listwatch's events differ from kube-apiserver's storage (-apiserver +listwatch):\n%s", p.name, describeOpts(p.opts), d)
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
	deadline := time.NewTimer(syncWait)
	defer deadline.Stop()
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
		case <-deadline.C:
			t.Fatalf("watch did not confirm revision %d within %v; got %d events: %s", rev, syncWait, len(s.events), describeAll(s.events))
		}
		retry.Stop()
	}
}

// take records one event: progress bookmarks are the test's own probes
// and only move synced; every other event is kept for comparison.
func (s *stream) take(e watch.Event, open bool) {
	switch {
	case !open:
		s.ended = true
	case e.Type == watch.Error:
		s.events = append(s.events, e)
		s.ended = true
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
// bookmark, and returns it.
func (s *stream) nextProgress(t testing.TB) watch.Event {
	t.Helper()
	deadline := time.NewTimer(syncWait)
	defer deadline.Stop()
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
			return e
		case <-retry.C:
		case <-deadline.C:
			t.Fatal("no progress bookmark")
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

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
