package testdeadline

import (
	"testing"
	"time"
)

type fakeT struct {
	deadline time.Time
	has      bool
	cleanups []func()
}

func (f *fakeT) Deadline() (time.Time, bool) { return f.deadline, f.has }
func (f *fakeT) Cleanup(fn func())           { f.cleanups = append(f.cleanups, fn) }
func (f *fakeT) end() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestContextEndsBeforeTheBinary(t *testing.T) {
	far := time.Now().Add(10 * time.Minute)
	ft := &fakeT{deadline: far, has: true}
	ctx := Context(ft)
	d, ok := ctx.Deadline()
	if !ok || !d.Equal(far.Add(-Margin)) {
		t.Errorf("deadline %v %v, want %v (Margin before the binary's)", d, ok, far.Add(-Margin))
	}
	ft.end()
	if ctx.Err() == nil {
		t.Error("the context outlived its test")
	}
}

func TestContextNearTheEnd(t *testing.T) {
	near := time.Now().Add(20 * time.Second)
	ft := &fakeT{deadline: near, has: true}
	d, ok := Context(ft).Deadline()
	if !ok || !d.Before(near) || d.Before(time.Now()) {
		t.Errorf("deadline %v %v, want between now and %v", d, ok, near)
	}
	ft.end()
}

func TestContextWithoutDeadline(t *testing.T) {
	ft := &fakeT{}
	ctx := Context(ft)
	if _, ok := ctx.Deadline(); ok {
		t.Error("a test without a deadline got a context with one")
	}
	ft.end()
	if ctx.Err() == nil {
		t.Error("the context outlived its test")
	}
}

// A benchmark has no Deadline method at all.
type cleanupOnly struct{ fns []func() }

func (c *cleanupOnly) Cleanup(fn func()) { c.fns = append(c.fns, fn) }

func TestContextOfABenchmark(t *testing.T) {
	c := &cleanupOnly{}
	if _, ok := Context(c).Deadline(); ok {
		t.Error("a benchmark got a deadline")
	}
}
