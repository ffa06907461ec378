package store_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/cache"

	. "github.com/cachelab/cachelab/internal/difftest"
	"github.com/cachelab/cachelab/store"
)

// undeltaSide is one UndeltaStore and the lists pushed to it, in the
// order pushed.
type undeltaSide struct {
	s      store.Store
	pushed [][]any
}

// runUndeltaScript runs ops (the cache ones of an expiration script)
// against cachelab's and client-go's UndeltaStore, comparing every
// result, every push (each list sorted: client-go's are in map order),
// and the contents and resourceVersion after every step; it returns the
// transcript.
func runUndeltaScript(t *testing.T, ops []expOp) []string {
	t.Helper()
	cl, cg := &undeltaSide{}, &undeltaSide{}
	cl.s = store.NewUndeltaStore(func(l []any) { cl.pushed = append(cl.pushed, l) }, store.MetaNamespaceKeyFunc)
	cg.s = cache.NewUndeltaStore(func(l []any) { cg.pushed = append(cg.pushed, l) }, cache.MetaNamespaceKeyFunc)
	var trace []string
	for i, op := range ops {
		a, b := expStep(expSide{s: cl.s}, op), expStep(expSide{s: cg.s}, op)
		pa, pb := takePushes(cl), takePushes(cg)
		if d := cmp.Diff(b, a); d != "" {
			t.Fatalf("divergence from client-go at step %d (%s): result (-client-go +cachelab):\n%s", i+1, op, d)
		}
		if d := cmp.Diff(sortedPushes(pb), sortedPushes(pa)); d != "" {
			t.Fatalf("divergence from client-go at step %d (%s): pushes (-client-go +cachelab):\n%s", i+1, op, d)
		}
		for _, l := range pa {
			if !slices.Equal(l, SortedByKey(l)) {
				t.Fatalf("step %d (%s): cachelab pushed %s, want key order", i+1, op, describeList(l))
			}
		}
		if d := cmp.Diff(undeltaStateOf(cg.s), undeltaStateOf(cl.s)); d != "" {
			t.Fatalf("divergence from client-go after step %d (%s): state (-client-go +cachelab):\n%s", i+1, op, d)
		}
		trace = append(trace, describeUndelta(op, a, pa))
	}
	return trace
}

func takePushes(s *undeltaSide) [][]any {
	p := s.pushed
	s.pushed = nil
	return p
}

func sortedPushes(p [][]any) [][]any {
	out := make([][]any, len(p))
	for i, l := range p {
		out[i] = SortedByKey(l)
	}
	return out
}

// undeltaStateOf is the contents (sorted) and the resourceVersion.
func undeltaStateOf(s store.Store) []any {
	return []any{SortedByKey(s.List()), s.LastStoreSyncResourceVersion()}
}

// describeUndelta is a step's line: what it returned, then each push.
func describeUndelta(op expOp, r expResult, pushed [][]any) string {
	line := describeExp(op, r)
	if line == "" {
		line = op.String()
	}
	for _, l := range pushed {
		line += fmt.Sprintf(" ⇒ push [%s]", describeList(l))
	}
	return line
}

// runUndelta runs a script and compares its transcript with want.
func runUndelta(t *testing.T, ops []expOp, want ...string) {
	t.Helper()
	got := runUndeltaScript(t, ops)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s\ngot:\n\t%s", d, strings.Join(got, "\n\t"))
	}
}

// client-go: undelta_store.go Add, Update, Delete, Replace (U1)
func TestUndeltaPushesAfterEveryWrite(t *testing.T) {
	runUndelta(t, []expOp{
		eAdd(ey3), eAdd(ex1), eUpdate(ex2),
		eDelete(ey3), eDelete(ey3), // not stored any more: still a push
		eReplace("9", ez4, ey3), eReplace(""),
		eAdd(Bad(1)), eDelete(Bad(2)), eReplace("10", ex1, Bad(3)), // refused: no push
		eRV(),
	},
		"add a/y@3 ⇒ push [a/y@3]",
		"add a/x@1 ⇒ push [a/x@1 a/y@3]",
		"update a/x@2 ⇒ push [a/x@2 a/y@3]",
		"delete a/y@3 ⇒ push [a/x@2]",
		"delete a/y@3 ⇒ push [a/x@2]",
		`replace [b/z@4 a/y@3] rv="9" ⇒ push [a/y@3 b/z@4]`,
		`replace [] rv="" ⇒ push []`,
		"add difftest.BadObject{ID:1} → error: KeyError: couldn't create key for object {ID:1}: object has no meta: object does not implement the Object interfaces",
		"delete difftest.BadObject{ID:2} → error: KeyError: couldn't create key for object {ID:2}: object has no meta: object does not implement the Object interfaces",
		`replace [a/x@1 difftest.BadObject{ID:3}] rv="10" → error: KeyError: couldn't create key for object {ID:3}: object has no meta: object does not implement the Object interfaces`,
		`rv → ""`,
	)
}

// client-go: undelta_store.go (the embedded Store's reads, Resync,
// Bookmark) (U2)
func TestUndeltaReadsDoNotPush(t *testing.T) {
	runUndelta(t, []expOp{
		eAdd(ex1), eGet(ex1), eGetByKey("a/x"), eList(), eListKeys(),
		eResync(), eBookmark("42"), eRV(),
	},
		"add a/x@1 ⇒ push [a/x@1]",
		"get a/x@1 → a/x@1",
		"getbykey a/x → a/x@1",
		"list → [a/x@1]",
		"listkeys → [a/x]",
		"resync",
		`bookmark rv="42"`,
		`rv → "42"`,
	)
}
