package store_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	testingclock "k8s.io/utils/clock/testing"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// expConfig says how an expiration script builds its two caches. client-go
// stamps entries on an injected clock only in NewFakeExpirationStore, so
// its side is always one; with a deletedKeys channel it behaves as a plain
// ExpirationCache that also reports what expired.
type expConfig struct {
	// TTL is the TTLPolicy's (on the script's clock), unless FakePolicy.
	TTL time.Duration
	// FakePolicy uses FakeExpirationPolicy: every entry expires except
	// the keys a "keep" step put in NeverExpire.
	FakePolicy bool
	// Store is "cache" (cachelab's NewExpirationCache), "fake" (both
	// NewFakeExpirationStore, the keys they report compared) or
	// "fake-nil" (both NewFakeExpirationStore with deletedKeys nil).
	Store string
}

// expOp is one step of an expiration script.
type expOp struct {
	kind string // add update delete get getbykey list listkeys replace bookmark resync rv step keep unkeep
	obj  any
	list []any
	key  string        // getbykey, keep, unkeep
	rv   string        // replace, bookmark
	d    time.Duration // step
}

func eAdd(o any) expOp                    { return expOp{kind: "add", obj: o} }
func eUpdate(o any) expOp                 { return expOp{kind: "update", obj: o} }
func eDelete(o any) expOp                 { return expOp{kind: "delete", obj: o} }
func eGet(o any) expOp                    { return expOp{kind: "get", obj: o} }
func eGetByKey(k string) expOp            { return expOp{kind: "getbykey", key: k} }
func eList() expOp                        { return expOp{kind: "list"} }
func eListKeys() expOp                    { return expOp{kind: "listkeys"} }
func eReplace(rv string, os ...any) expOp { return expOp{kind: "replace", list: os, rv: rv} }
func eBookmark(rv string) expOp           { return expOp{kind: "bookmark", rv: rv} }
func eResync() expOp                      { return expOp{kind: "resync"} }
func eRV() expOp                          { return expOp{kind: "rv"} }
func eStep(d time.Duration) expOp         { return expOp{kind: "step", d: d} }
func eKeep(k string) expOp                { return expOp{kind: "keep", key: k} }
func eUnkeep(k string) expOp              { return expOp{kind: "unkeep", key: k} }

func (o expOp) String() string {
	switch o.kind {
	case "getbykey", "keep", "unkeep":
		return o.kind + " " + o.key
	case "replace":
		return fmt.Sprintf("replace [%s] rv=%q", describeList(o.list), o.rv)
	case "bookmark":
		return fmt.Sprintf("bookmark rv=%q", o.rv)
	case "step":
		return "step " + o.d.String()
	case "list", "listkeys", "resync", "rv":
		return o.kind
	}
	return o.kind + " " + Describe(o.obj)
}

// expSide is one implementation under test.
type expSide struct {
	s       store.Store      // client-go's Store has the same methods
	deleted chan string      // nil unless the store reports expiries
	never   sets.Set[string] // the fake policy's NeverExpire
}

// expResult is what one step returned; map-order results are sorted.
type expResult struct {
	Obj     any
	Objs    []any
	Keys    []string
	Exists  bool
	Err     string
	RV      string
	Expired []string // keys the store reported as expired, sorted
}

// expState is what can be seen without expiring anything: ListKeys asks
// no policy (X2).
type expState struct {
	Keys []string
	RV   string
}

func newExpSides(cfg expConfig, clk *testingclock.FakeClock) (cl, cg expSide) {
	cl.never, cg.never = sets.New[string](), sets.New[string]()
	if cfg.Store == "fake" || cfg.Store == "cache" {
		cg.deleted = make(chan string, 1024)
	}
	if cfg.Store == "fake" {
		cl.deleted = make(chan string, 1024)
	}
	var clPolicy store.ExpirationPolicy = &store.TTLPolicy{TTL: cfg.TTL, Clock: clk}
	var cgPolicy cache.ExpirationPolicy = &cache.TTLPolicy{TTL: cfg.TTL, Clock: clk}
	if cfg.FakePolicy {
		clPolicy = &store.FakeExpirationPolicy{NeverExpire: cl.never, RetrieveKeyFunc: func(obj any) (string, error) {
			return store.MetaNamespaceKeyFunc(obj.(*store.TimestampedEntry).Obj)
		}}
		cgPolicy = &cache.FakeExpirationPolicy{NeverExpire: cg.never, RetrieveKeyFunc: func(obj any) (string, error) {
			return cache.MetaNamespaceKeyFunc(obj.(*cache.TimestampedEntry).Obj)
		}}
	}
	if cfg.Store == "cache" {
		cl.s = store.NewExpirationCache(store.ExpirationOptions{Clock: clk, Policy: clPolicy})
	} else {
		cl.s = store.NewFakeExpirationStore(store.MetaNamespaceKeyFunc, sendOnly(cl.deleted), clPolicy, clk)
	}
	cg.s = cache.NewFakeExpirationStore(cache.MetaNamespaceKeyFunc, sendOnly(cg.deleted), cgPolicy, clk)
	return cl, cg
}

// sendOnly keeps a nil channel nil (a nil chan string converted to
// chan<- string is still nil).
func sendOnly(ch chan string) chan<- string { return ch }

// runExpScript runs ops against cachelab's and client-go's caches on one
// fake clock, comparing every result (the keys each reports as expired
// included, when both report) and the state after every step; it returns
// the transcript, each line stamped with the clock's offset.
func runExpScript(t *testing.T, cfg expConfig, ops []expOp) []string {
	t.Helper()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	cl, cg := newExpSides(cfg, clk)
	var trace []string
	for i, op := range ops {
		at := clk.Since(start)
		switch op.kind { // steps that act on the world, not on a cache
		case "step":
			clk.Step(op.d)
			trace = append(trace, fmt.Sprintf("t=%v %s", at, op))
			continue
		case "keep":
			cl.never.Insert(op.key)
			cg.never.Insert(op.key)
			continue
		case "unkeep":
			cl.never.Delete(op.key)
			cg.never.Delete(op.key)
			continue
		}
		a, b := expStep(cl, op), expStep(cg, op)
		if cl.deleted == nil { // only client-go's reports: nothing to compare
			b.Expired = nil
		}
		if d := cmp.Diff(b, a); d != "" {
			t.Fatalf("divergence from client-go at step %d (%s): result (-client-go +cachelab):\n%s", i+1, op, d)
		}
		if d := cmp.Diff(expStateOf(cg), expStateOf(cl)); d != "" {
			t.Fatalf("divergence from client-go after step %d (%s): state (-client-go +cachelab):\n%s", i+1, op, d)
		}
		if keys := cl.s.ListKeys(); !slices.IsSorted(keys) {
			t.Fatalf("after step %d (%s): cachelab's ListKeys %q, want key order", i+1, op, keys)
		}
		if line := describeExp(op, a); line != "" {
			trace = append(trace, fmt.Sprintf("t=%v %s", at, line))
		}
	}
	return trace
}

func expStep(side expSide, op expOp) (r expResult) {
	s := side.s
	var err error
	switch op.kind {
	case "add":
		err = s.Add(op.obj)
	case "update":
		err = s.Update(op.obj)
	case "delete":
		err = s.Delete(op.obj)
	case "get":
		r.Obj, r.Exists, err = s.Get(op.obj)
	case "getbykey":
		r.Obj, r.Exists, err = s.GetByKey(op.key)
	case "list":
		r.Objs = SortedByKey(s.List())
	case "listkeys":
		r.Keys = Sorted(s.ListKeys())
	case "replace":
		err = s.Replace(op.list, op.rv)
	case "bookmark":
		s.Bookmark(op.rv)
	case "resync":
		err = s.Resync()
	case "rv":
		r.RV = s.LastStoreSyncResourceVersion()
	default:
		panic("unknown expiration op " + op.kind)
	}
	r.Err = NormErr(err)
	r.Expired = drain(side.deleted)
	return r
}

// drain takes every key waiting on ch, sorted: client-go's List expires
// entries in map order.
func drain(ch chan string) []string {
	var keys []string
	for ch != nil {
		select {
		case k := <-ch:
			keys = append(keys, k)
		default:
			return Sorted(keys)
		}
	}
	return nil
}

func expStateOf(side expSide) expState {
	return expState{Keys: Sorted(side.s.ListKeys()), RV: side.s.LastStoreSyncResourceVersion()}
}

// describeExp is the transcript line for a step: reads, rv and expiries
// say what happened, writes only when they fail.
func describeExp(op expOp, r expResult) string {
	var parts []string
	switch {
	case r.Err != "":
		parts = append(parts, "error: "+r.Err)
	case op.kind == "get" || op.kind == "getbykey":
		if r.Exists {
			parts = append(parts, Describe(r.Obj))
		} else {
			parts = append(parts, "not found")
		}
	case op.kind == "list":
		parts = append(parts, "["+describeList(r.Objs)+"]")
	case op.kind == "listkeys":
		parts = append(parts, "["+strings.Join(r.Keys, " ")+"]")
	case op.kind == "rv":
		parts = append(parts, fmt.Sprintf("%q", r.RV))
	}
	if len(r.Expired) > 0 {
		parts = append(parts, "expired "+strings.Join(r.Expired, " "))
	}
	if len(parts) == 0 {
		return ""
	}
	return op.String() + " → " + strings.Join(parts, ", ")
}

// runExp runs a script and compares its transcript with want.
func runExp(t *testing.T, cfg expConfig, ops []expOp, want ...string) {
	t.Helper()
	got := runExpScript(t, cfg, ops)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s\ngot:\n\t%s", d, strings.Join(got, "\n\t"))
	}
}

// describeList prints objects in their order, separated by spaces.
func describeList(objs []any) string {
	parts := make([]string, len(objs))
	for i, o := range objs {
		parts[i] = Describe(o)
	}
	return strings.Join(parts, " ")
}
