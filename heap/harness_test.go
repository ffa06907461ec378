package heap_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/cache"

	"github.com/cachelab/cachelab/heap"
	. "github.com/cachelab/cachelab/internal/difftest"
)

// job is what the tests queue: its name is its key, its priority orders it.
type job struct {
	Name string
	Prio int
}

func (j job) String() string { return fmt.Sprintf("%s:%d", j.Name, j.Prio) }

func j(name string, prio int) job { return job{name, prio} }

// jobKey keys a job by name and refuses anything else, so that scripts
// can meet the KeyError paths with difftest.Bad.
func jobKey(obj any) (string, error) {
	if j, ok := obj.(job); ok {
		return j.Name, nil
	}
	return "", fmt.Errorf("not a job: %v", obj)
}

// The orders a script can run with. "prio<=" is not a strict order: it
// shows that the two heaps make the very same comparisons, not merely
// agree on a well-behaved one.
var lessFuncs = map[string]heap.LessFunc{
	"prio":   func(a, b any) bool { return a.(job).Prio < b.(job).Prio },
	"prio<=": func(a, b any) bool { return a.(job).Prio <= b.(job).Prio },
	"prio,name": func(a, b any) bool {
		x, y := a.(job), b.(job)
		return x.Prio < y.Prio || x.Prio == y.Prio && x.Name < y.Name
	},
}

var lessNames = []string{"prio", "prio<=", "prio,name"}

// heapAPI is client-go's Heap's method set, which both heaps have.
type heapAPI interface {
	Add(obj any) error
	Update(obj any) error
	AddIfNotPresent(obj any) error
	BulkAdd(list []any) error
	Delete(obj any) error
	Pop() (any, error)
	List() []any
	ListKeys() []string
	Get(obj any) (any, bool, error)
	GetByKey(key string) (any, bool, error)
	Close()
	IsClosed() bool
}

func newHeaps(less string) (cl, cg heapAPI) {
	f := lessFuncs[less]
	return heap.NewHeap(jobKey, f), cache.NewHeap(jobKey, cache.LessFunc(f))
}

// hop is one step of a heap script.
type hop struct {
	kind string // add update addifnotpresent bulkadd delete pop get getbykey list listkeys close
	obj  any
	list []any
	key  string
}

func add(o any) hop             { return hop{kind: "add", obj: o} }
func update(o any) hop          { return hop{kind: "update", obj: o} }
func addIfNotPresent(o any) hop { return hop{kind: "addifnotpresent", obj: o} }
func bulkAdd(os ...any) hop     { return hop{kind: "bulkadd", list: os} }
func del(o any) hop             { return hop{kind: "delete", obj: o} }
func get(o any) hop             { return hop{kind: "get", obj: o} }
func getByKey(k string) hop     { return hop{kind: "getbykey", key: k} }
func pop() hop                  { return hop{kind: "pop"} }
func list() hop                 { return hop{kind: "list"} }
func listKeys() hop             { return hop{kind: "listkeys"} }
func closeHeap() hop            { return hop{kind: "close"} }

func (o hop) String() string {
	switch o.kind {
	case "bulkadd":
		return fmt.Sprintf("bulkadd %v", o.list)
	case "getbykey":
		return "getbykey " + o.key
	case "pop", "list", "listkeys", "close":
		return o.kind
	}
	return fmt.Sprintf("%s %v", o.kind, o.obj)
}

// heapResult is what one step returned. Objs and Keys are sorted by key
// where client-go's order is map order (List, ListKeys).
type heapResult struct {
	Obj     any
	Objs    []any
	Keys    []string
	Exists  bool
	Err     string
	Blocked bool // a Pop on an empty open heap: not called, it would wait
}

// heapState is everything observable between steps.
type heapState struct {
	Objs   []any
	Keys   []string
	Closed bool
}

// runHeapScript runs ops against cachelab's and client-go's Heap with the
// named order, comparing every result and the whole state after every
// step; it returns the transcript.
func runHeapScript(t *testing.T, less string, ops []hop) []string {
	t.Helper()
	cl, cg := newHeaps(less)
	var trace []string
	for i, op := range ops {
		a, b := step(cl, op), step(cg, op)
		if d := cmp.Diff(b, a); d != "" {
			t.Fatalf("divergence from client-go at step %d (%s): result (-client-go +cachelab):\n%s", i+1, op, d)
		}
		if d := cmp.Diff(stateOf(cg), stateOf(cl)); d != "" {
			t.Fatalf("divergence from client-go after step %d (%s): state (-client-go +cachelab):\n%s", i+1, op, d)
		}
		checkKeyOrder(t, cl, i+1, op)
		if line := describe(op, a); line != "" {
			trace = append(trace, line)
		}
	}
	return trace
}

func step(h heapAPI, op hop) (r heapResult) {
	var err error
	switch op.kind {
	case "add":
		err = h.Add(op.obj)
	case "update":
		err = h.Update(op.obj)
	case "addifnotpresent":
		err = h.AddIfNotPresent(op.obj)
	case "bulkadd":
		err = h.BulkAdd(op.list)
	case "delete":
		err = h.Delete(op.obj)
	case "get":
		r.Obj, r.Exists, err = h.Get(op.obj)
	case "getbykey":
		r.Obj, r.Exists, err = h.GetByKey(op.key)
	case "pop":
		if len(h.ListKeys()) == 0 && !h.IsClosed() {
			return heapResult{Blocked: true}
		}
		r.Obj, err = h.Pop()
	case "list":
		r.Objs = sortedJobs(h.List())
	case "listkeys":
		r.Keys = Sorted(h.ListKeys())
	case "close":
		h.Close()
	default:
		panic("unknown heap op " + op.kind)
	}
	r.Err = NormErr(err)
	return r
}

func stateOf(h heapAPI) heapState {
	return heapState{Objs: sortedJobs(h.List()), Keys: Sorted(h.ListKeys()), Closed: h.IsClosed()}
}

func sortedJobs(objs []any) []any {
	out := slices.Clone(objs)
	sort.SliceStable(out, func(i, k int) bool { return out[i].(job).Name < out[k].(job).Name })
	return out
}

// checkKeyOrder fails unless cachelab's List and ListKeys come in key
// order, List()[i] being the object stored under ListKeys()[i] (B7): the
// state compared with client-go is sorted, so it cannot see this.
func checkKeyOrder(t *testing.T, h heapAPI, stepNo int, op hop) {
	t.Helper()
	keys, objs := h.ListKeys(), h.List()
	if !slices.IsSorted(keys) || len(keys) != len(objs) {
		t.Fatalf("after step %d (%s): ListKeys = %q (%d objects listed), want sorted keys, one per object", stepNo, op, keys, len(objs))
	}
	for i, k := range keys {
		if objs[i].(job).Name != k {
			t.Fatalf("after step %d (%s): List()[%d] = %v, want the object stored under %q", stepNo, op, i, objs[i], k)
		}
	}
}

// describe is the transcript line for a step: reads and pops say what
// they returned, writes only when they fail.
func describe(op hop, r heapResult) string {
	out := ""
	switch {
	case r.Err != "":
		out = "error: " + r.Err
	case r.Blocked:
		out = "blocks (empty and open: not called)"
	case op.kind == "pop":
		out = fmt.Sprint(r.Obj)
	case op.kind == "get" || op.kind == "getbykey":
		out = "not found"
		if r.Exists {
			out = fmt.Sprint(r.Obj)
		}
	case op.kind == "list":
		out = fmt.Sprint(r.Objs)
	case op.kind == "listkeys":
		out = "[" + strings.Join(r.Keys, " ") + "]"
	default:
		return ""
	}
	return op.String() + " → " + out
}

// run runs a script with an order and compares its transcript with want.
func run(t *testing.T, less string, ops []hop, want ...string) {
	t.Helper()
	got := runHeapScript(t, less, ops)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("transcript (-want +got):\n%s\ngot:\n\t%s", d, strings.Join(got, "\n\t"))
	}
}
