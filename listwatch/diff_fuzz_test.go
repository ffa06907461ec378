package listwatch_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/listwatch"
)

// FuzzListWatchVsAPIServer drives listwatch and kube-apiserver's etcd3
// storage (apistorage, no watch cache) with the same random sequence of
// LISTs, WATCHes, writes and compactions on one etcd, and compares every
// answer and every watch event (see diff_helpers_test.go). The input is
// read a byte at a time as a sequence of choices (fuzzChoices); the seed
// corpus is in testdata/fuzz/FuzzListWatchVsAPIServer.
//
//	go test ./listwatch -run XXX -fuzz FuzzListWatchVsAPIServer -parallel 1
//
// Each input gets a resource of its own (pods1, pods2, ...) on an etcd
// the whole fuzz run shares, so inputs do not see each other's objects;
// compactions are etcd-wide, which only makes older revisions unreadable,
// on both sides alike.
func FuzzListWatchVsAPIServer(f *testing.F) {
	e := startEtcd(f)
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		n++
		(&fuzzRun{s: fuzzSides(t, e, fmt.Sprintf("pods%d", n)), c: fuzzChoices{data: data}}).run(t)
	})
}

// FuzzListWatchVsAPIServerRawValues is FuzzListWatchVsAPIServer with two
// more operations: putting a value kube-apiserver cannot decode under an
// object's key, and taking it away (E12). Which requests meet it depends
// on the range of keys each reads (E16), so every selector the requests
// choose is tried against values inside and outside that range. (A
// target of its own, so that FuzzListWatchVsAPIServer's corpus keeps its
// meaning.)
//
//	go test ./listwatch -run XXX -fuzz FuzzListWatchVsAPIServerRawValues -parallel 1
func FuzzListWatchVsAPIServerRawValues(f *testing.F) {
	e := startEtcd(f)
	for _, seed := range rawFuzzSeeds {
		f.Add(seed)
	}
	n := 0
	f.Fuzz(func(t *testing.T, data []byte) {
		n++
		(&fuzzRun{s: fuzzSides(t, e, fmt.Sprintf("rawpods%d", n)), c: fuzzChoices{data: data}, raw: true}).run(t)
	})
}

// fuzzSides serves a resource of the input's own on the shared etcd.
func fuzzSides(t *testing.T, e *listwatch.Embedded, resource string) *sides {
	ctx := context.Background()
	res := listwatch.Resource{Version: "v1", Resource: resource, Kind: "Pod", Namespaced: true}
	return serveBoth(t, e, res, connectTo(ctx, t, e), connectTo(ctx, t, e))
}

// rawFuzzSeeds put undecodable values (op 11) inside and outside the
// ranges of watches and LISTs narrowed to a namespace or a name, and
// take them away (12).
var rawFuzzSeeds = [][]byte{
	// Create ns1/a, ns2/a, ns1/b; watch all namespaces with
	// fields=metadata.namespace=ns1, ns1 with metadata.name=a from now,
	// and a watch-list with metadata.namespace=ns2,metadata.name=a; a
	// value in ns2/b; LIST all namespaces with metadata.namespace=ns1,
	// then with metadata.name=a (not narrowed); create ns1/c; settle; a
	// value in ns1/d; update ns1/a; settle; both values taken away;
	// settle.
	{0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0,
		0, 0, 6, 0, 0, 0, 0, 3, 0, 0, 0, 0,
		0, 0, 6, 2, 0, 0, 0, 2, 0, 0, 0, 1,
		0, 0, 6, 0, 3, 0, 0, 5, 0, 1, 0, 0,
		1, 1, 11, 0, 0, 4, 0, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0, 0, 2, 0,
		0, 2, 0, 0, 0, 0, 7, 0, 3, 11, 0, 0, 1, 2, 0, 0, 7,
		1, 1, 12, 0, 3, 12, 0, 0, 7},
	// Create ns1/a, ns2/a; a value in ns2/c; a watch-list of all
	// namespaces with metadata.namespace=ns1 and app=web, a legacy watch
	// from "0" in ns1 with metadata.name=a, a watch of all namespaces
	// with metadata.name!=b (not narrowed); LIST ns1 with
	// metadata.namespace=ns2,metadata.name=a; a value in ns1/b; update
	// ns2/a; settle; ns2/c taken away; settle.
	{0, 0, 0, 1, 1, 0, 0, 0, 1, 2, 11,
		0, 0, 6, 0, 3, 0, 2, 3, 0, 1, 0, 0,
		0, 0, 6, 1, 0, 0, 0, 2, 1, 0, 0, 1,
		0, 0, 6, 2, 0, 0, 0, 4, 0, 0, 0, 0,
		0, 0, 4, 0, 0, 0, 0, 5, 1,
		0, 1, 11, 1, 0, 1, 4, 0, 0, 7, 1, 2, 12, 0, 0, 7},
}

// fuzzSeeds reach every operation; each byte is a choice (fuzzRun.step).
var fuzzSeeds = [][]byte{
	{0, 0, 0, 0, 1, 1, 0, 0, 2, 2, 4, 0, 0, 0, 0, 0, 0, 0},
	{0, 0, 0, 1, 0, 1, 1, 0, 0, 1, 2, 3, 6, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 7, 2, 0, 0, 0},
	{0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 1, 1, 4, 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 5, 0, 0},
	{0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 2, 1, 0, 1, 0, 2, 0, 3, 3, 0, 7, 6, 1, 3, 2, 1, 1, 1, 2, 7},
	{0, 0, 0, 0, 0, 1, 1, 1, 6, 2, 1, 0, 0, 0, 0, 1, 1, 3, 1, 2, 2, 0, 2, 0, 1, 7, 4, 2, 6, 3, 0, 0, 0, 0, 1, 2, 2},
	{0, 1, 1, 2, 6, 4, 0, 0, 0, 0, 0, 1, 2, 8, 0, 1, 0, 1, 0, 3, 1, 6, 0, 3, 0, 5, 0, 0, 2, 0, 1, 0, 1, 7},
	// Timeouts and the WatchList feature: creates, a watch with a 1 s
	// timeout, the clock past it, WatchList off, a legacy watch, an
	// update, settle, WatchList on, a refused watch-list, 30 s more.
	{0, 0, 0, 1, 0, 1, 0, 2, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 2, 0, 3, 0, 0, 10, 0, 0, 0, 9,
		0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 7, 0, 0, 9, 0, 0, 6, 1, 0, 0, 2, 0, 0, 1, 3, 1, 0, 0, 10, 2},
}

// fuzzChoices reads an input as a sequence of small choices; an
// exhausted input chooses 0.
type fuzzChoices struct{ data []byte }

func (c *fuzzChoices) pick(n int) int {
	if len(c.data) == 0 {
		return 0
	}
	b := c.data[0]
	c.data = c.data[1:]
	return int(b) % n
}

func (c *fuzzChoices) done() bool { return len(c.data) == 0 }

// fuzzRun is one input's run: the servers, the choices, and the
// continue tokens seen so far (for later LISTs to continue).
type fuzzRun struct {
	s      *sides
	c      fuzzChoices
	tokens []string
	raw    bool // put and take away undecodable values too (ops 11, 12)
}

// maxFuzzSteps bounds one input's work.
const maxFuzzSteps = 40

func (r *fuzzRun) run(t *testing.T) {
	for i := 0; i < maxFuzzSteps && !r.c.done(); i++ {
		r.step(t)
		if t.Failed() {
			return
		}
	}
	r.s.settle(t)
}

// step runs one operation:
//
//	0 create   1 update labels   2 delete   3 compact
//	4 LIST     5 LIST continuing a token    6 WATCH
//	7 settle (every open watch delivers what was written; compare)
//	8 stop a watch   9 turn the WatchList feature on or off (both sides)
//	10 advance the servers' clock (watches reach their TimeoutSeconds)
//	11 put an undecodable value   12 take it away (raw runs only)
func (r *fuzzRun) step(t *testing.T) {
	ctx := context.Background()
	w := r.s.w
	ns, name := pick(&r.c, "ns1", "ns2"), pick(&r.c, "a", "b", "c", "d")
	ops := 11
	if r.raw {
		ops = 13
	}
	switch r.c.pick(ops) {
	case 0:
		labels := r.labels()
		_, err := w.Create(ctx, pod(ns+"/"+name, labels...))
		t.Logf("create %s/%s %v: %v (rv %d)", ns, name, labels, err, r.s.rev(t))
	case 1:
		labels := r.labels()
		_, err := w.Update(ctx, pod(ns+"/"+name, labels...))
		t.Logf("update %s/%s %v: %v (rv %d)", ns, name, labels, err, r.s.rev(t))
	case 2:
		_, err := w.Delete(ctx, ns, name, listwatch.Preconditions{})
		t.Logf("delete %s/%s: %v (rv %d)", ns, name, err, r.s.rev(t))
	case 3:
		// Settled first: a watch still catching up when etcd compacts
		// may or may not be cancelled, depending on how far etcd had
		// got with it, on each side independently. Which of the two
		// happens is etcd's timing, not kube-apiserver's rules.
		r.s.settle(t)
		at := r.s.rev(t) - int64(r.c.pick(4))
		t.Logf("compact %d: %v", at, r.s.etcd.Compact(ctx, at))
	case 4:
		r.list(t, r.listOptions(t))
	case 5:
		opts := r.listOptions(t)
		if len(r.tokens) > 0 {
			opts.Continue = r.tokens[r.c.pick(len(r.tokens))]
		} else {
			opts.Continue = "bm90IGEgdG9rZW4"
		}
		r.list(t, opts)
	case 6:
		opts := r.listOptions(t)
		opts.Limit, opts.Continue = 0, ""
		opts.AllowWatchBookmarks = r.c.pick(2) == 0
		opts.SendInitialEvents = pick(&r.c, nil, boolp(true), boolp(false))
		opts.TimeoutSeconds = pick(&r.c, nil, nil, int64p(1), int64p(5), int64p(30))
		ns := pick(&r.c, "", "ns1", "ns2")
		t.Logf("watch #%d in %q: %s (rv %d)", len(r.s.open)+1, ns, describeOpts(opts), r.s.rev(t))
		if p := r.s.watchBoth(t, ns, opts); p != nil {
			p.name = fmt.Sprintf("#%d", len(r.s.open))
		}
	case 7:
		t.Logf("settle")
		r.s.settle(t)
	case 8:
		if n := len(r.s.open); n > 0 {
			i := r.c.pick(n)
			t.Logf("stop %s", r.s.open[i].name)
			r.s.open[i].stop()
			r.s.open = append(r.s.open[:i], r.s.open[i+1:]...)
		}
	case 9:
		on := !r.s.ours.WatchListFeature()
		t.Logf("WatchList feature on: %v", on)
		r.s.ours.SetWatchListFeature(on)
		r.s.theirs.SetWatchListFeature(on)
	case 10:
		t.Logf("advance")
		r.advance(t, pick(&r.c, time.Second, 5*time.Second, 30*time.Second))
	case 11:
		_, err := w.PutRaw(ctx, ns, name, []byte("garbage"))
		t.Logf("put-raw %s/%s: %v (rv %d)", ns, name, err, r.s.rev(t))
	case 12:
		_, err := w.DeleteRaw(ctx, ns, name)
		t.Logf("delete-raw %s/%s: %v (rv %d)", ns, name, err, r.s.rev(t))
	}
}

// advance moves the servers' clock by d, after settling (so no event is
// in flight when a watch's timeout cuts it off), and reads each watch
// whose TimeoutSeconds has passed to its end. It stays well short of the
// half hour kube-apiserver's storage gives a watch without one.
func (r *fuzzRun) advance(t *testing.T, d time.Duration) {
	if r.s.clock.Since(diffEpoch)+d > 20*time.Minute {
		return
	}
	r.s.settle(t)
	r.s.clock.Step(d)
	for _, p := range r.s.open {
		if p.opts.TimeoutSeconds == nil || *p.opts.TimeoutSeconds <= 0 || r.s.clock.Since(p.opened) < time.Duration(*p.opts.TimeoutSeconds)*time.Second {
			continue
		}
		for _, side := range p.sides {
			side.readTo(t, math.MaxInt64, math.MaxInt)
		}
		p.compare(t)
	}
}

// list sends one LIST to both sides and keeps its continue token.
func (r *fuzzRun) list(t *testing.T, opts metav1.ListOptions) {
	ns := pick(&r.c, "", "ns1", "ns2")
	t.Logf("list in %q: %s", ns, describeOpts(opts))
	ours, theirs := r.s.in(ns)
	a := listBoth(t, ours, theirs, opts)
	switch {
	case a.List != nil && a.List.GetContinue() != "":
		r.tokens = append(r.tokens, a.List.GetContinue())
	case a.Status != nil && a.Status.Continue != "":
		r.tokens = append(r.tokens, a.Status.Continue)
	}
}

func (r *fuzzRun) labels() []string {
	return pick(&r.c, nil, []string{"app", "web"}, []string{"app", "db"}, []string{"app", "web", "tier", "front"}, []string{"tier", "back"})
}

// listOptions chooses options around etcd's current revision: the past
// (perhaps compacted), now, the future, and a few that are not valid.
func (r *fuzzRun) listOptions(t *testing.T) metav1.ListOptions {
	now := r.s.rev(t)
	rv := pick(&r.c, "", "0", itoa(now), itoa(now-1), itoa(now-3), itoa(now+1), itoa(now+4), "x1")
	return metav1.ListOptions{
		ResourceVersion:      rv,
		ResourceVersionMatch: pick(&r.c, "", "", metav1.ResourceVersionMatchExact, metav1.ResourceVersionMatchNotOlderThan, "Bogus"),
		Limit:                int64(pick(&r.c, 0, 0, 1, 2, 3, -1)),
		LabelSelector:        pick(&r.c, "", "", "app=web", "app!=web", "app in (web,db)", "!app", "tier", "app=="),
		FieldSelector: pick(&r.c, "", "", "metadata.name=a", "metadata.namespace=ns1", "metadata.name!=b",
			"metadata.namespace=ns2,metadata.name=a", "spec.x=y", "metadata.name"),
	}
}

// pick chooses one of options.
func pick[T any](c *fuzzChoices, options ...T) T { return options[c.pick(len(options))] }
