package difftest

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// World is the shared part of the reflector and informer differential
// worlds: one scripted Server per side, every write applied to both, and a
// Settle that waits (inside a testing/synctest bubble) until both sides
// are idle and then compares what each did since the last Settle.
//
// Observations are compared per layer (requests, then whatever the
// concrete world adds) with go-cmp, and cachelab's side of each is
// appended to a transcript, so a named test can also show that it
// exercised the behaviour it claims.
type World struct {
	T      *testing.T
	CL, CG *Server // cachelab's and client-go's server

	seenCL, seenCG int // requests already compared
	// Relisted is whether the last settled step listed (a LIST or a
	// watch-list): its objects then came from a map in both
	// implementations, so their order is not comparable.
	Relisted   bool
	transcript []string
	compare    []func() // the concrete world's layers
}

func newWorld(t *testing.T) *World {
	return &World{T: t, CL: NewServer(), CG: NewServer()}
}

// Write applies one change to both servers.
func (w *World) Write(typ watch.EventType, obj *unstructured.Unstructured) {
	w.CL.Write(typ, obj)
	w.CG.Write(typ, obj)
	w.Note(fmt.Sprintf("server: %s %s", typ, objKey(obj)))
}

// Create, Update and Delete are Write shorthands.
func (w *World) Create(obj *unstructured.Unstructured) { w.Write(watch.Added, obj) }

// Update stores a new version of obj.
func (w *World) Update(obj *unstructured.Unstructured) { w.Write(watch.Modified, obj) }

// Delete removes obj's key.
func (w *World) Delete(obj *unstructured.Unstructured) { w.Write(watch.Deleted, obj) }

// Both runs f on both servers (a lever: fail, break, compact, bookmark).
func (w *World) Both(what string, f func(*Server)) {
	f(w.CL)
	f(w.CG)
	w.Note("server: " + what)
}

// Note adds a line to the transcript.
func (w *World) Note(s string) { w.transcript = append(w.transcript, s) }

// Transcript is what happened, as cachelab saw it.
func (w *World) Transcript() string { return strings.Join(w.transcript, "\n") }

// Advance lets d of fake time pass (the bubble's clock), then settles.
func (w *World) Advance(d time.Duration) {
	w.T.Helper()
	time.Sleep(d)
	w.Note(fmt.Sprintf("-- %v later", d))
	w.Settle()
}

// Settle waits until every goroutine of the bubble is blocked, then
// compares every layer.
func (w *World) Settle() {
	w.T.Helper()
	synctest.Wait()
	w.compareRequests()
	for _, c := range w.compare {
		c()
	}
}

// AddLayer adds a comparison that every Settle runs after the world's
// own: how a package's tests compare what they built on top of it.
func (w *World) AddLayer(compare func()) { w.compare = append(w.compare, compare) }

// Compare fails the test if the two sides' values of layer differ.
func (w *World) Compare(layer string, cl, cg any) bool {
	w.T.Helper()
	if d := Diff(cl, cg); d != "" {
		w.T.Errorf("%s differs after %q (-client-go +cachelab):\n%s", layer, w.lastNote(), d)
		return false
	}
	return true
}

func (w *World) lastNote() string {
	if len(w.transcript) == 0 {
		return "start"
	}
	return w.transcript[len(w.transcript)-1]
}

func (w *World) compareRequests() {
	w.T.Helper()
	cl, cg := w.CL.Requests(), w.CG.Requests()
	newCL, newCG := describeRequests(cl[w.seenCL:]), describeRequests(cg[w.seenCG:])
	w.seenCL, w.seenCG = len(cl), len(cg)
	w.Relisted = false
	for _, r := range newCL {
		if strings.HasPrefix(r, "list ") || strings.Contains(r, "sendInitialEvents=true") {
			w.Relisted = true
		}
	}
	for _, r := range newCL {
		w.Note("request: " + r)
	}
	w.Compare("requests", newCL, newCG)
}

// describeRequests turns requests into comparable lines. A watch's random
// TimeoutSeconds becomes whether it lies in client-go's [300, 600) range.
func describeRequests(rs []Request) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Verb + " " + DescribeOptions(r.Opts)
	}
	return out
}

// DescribeOptions prints the fields of ListOptions a reflector sets.
func DescribeOptions(o metav1.ListOptions) string {
	var parts []string
	add := func(k, v string) { parts = append(parts, k+"="+v) }
	add("rv", fmt.Sprintf("%q", o.ResourceVersion))
	if o.ResourceVersionMatch != "" {
		add("rvm", string(o.ResourceVersionMatch))
	}
	if o.Limit != 0 {
		add("limit", fmt.Sprint(o.Limit))
	}
	if o.Continue != "" {
		add("continue", "yes")
	}
	if o.SendInitialEvents != nil {
		add("sendInitialEvents", fmt.Sprint(*o.SendInitialEvents))
	}
	if o.AllowWatchBookmarks {
		add("bookmarks", "true")
	}
	if o.TimeoutSeconds != nil {
		s := *o.TimeoutSeconds
		add("timeout", map[bool]string{true: "in[300,600)", false: fmt.Sprint(s)}[s >= 300 && s < 600])
	}
	return strings.Join(parts, " ")
}

// Log records calls as lines, safe for concurrent use.
type Log struct {
	mu    sync.Mutex
	lines []string
	seen  int
}

// Add appends a line.
func (l *Log) Add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// Take returns the lines added since the last Take.
func (l *Log) Take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]string{}, l.lines[l.seen:]...)
	l.seen = len(l.lines)
	return out
}

// All returns every line.
func (l *Log) All() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string{}, l.lines...)
}

// Describe prints an object of either side: key@rv, tombstones, lists.
func Describe(obj any) string { return describe(Norm(obj)) }

// DescribeSorted prints objects in key order (for map-order segments).
func DescribeSorted(objs []any) string {
	s := make([]string, len(objs))
	for i, o := range objs {
		s[i] = Describe(o)
	}
	sort.Strings(s)
	return "[" + strings.Join(s, " ") + "]"
}
