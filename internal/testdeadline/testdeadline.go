// Package testdeadline gives a test's waits on real parts (a browser, an
// etcd starting, a child process) the deadline of the test binary itself,
// go test's -timeout, instead of a number of seconds of their own.
//
// A guard of a fixed number of seconds is a verdict of the wall clock:
// on a loaded machine a wait that would have ended fails it, and the test
// fails for the machine's load, not for what it tests (CI failed so when
// a browser test's 90 s ran out for the whole test on a busy 2-core
// runner). The binary's deadline is there to catch a hang, and is the
// only one a test needs; Context ends a little before it, so that the
// test fails with its own message (what it waited for) rather than go
// test's panic and goroutine dump.
package testdeadline

import (
	"context"
	"time"
)

// TB is the part of testing.TB Context needs: *testing.T has Deadline
// and Cleanup; *testing.B and *testing.F have no Deadline, and get a
// context without one.
type TB interface {
	Cleanup(func())
}

// Margin is how long before the binary's deadline Context ends: time for
// the test to report what it waited for, clean up (stop etcd, kill a
// browser) and for go test to print it.
const Margin = 30 * time.Second

// Context is a context that ends Margin before the test binary's
// deadline (go test -timeout), or, with no deadline (-timeout 0, or a
// benchmark), only when the test ends. It is cancelled when the test
// ends.
func Context(t TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if d, ok := Deadline(t); ok {
		ctx, cancel = context.WithDeadline(ctx, d)
		t.Cleanup(cancel)
	}
	return ctx
}

// Deadline is when Context ends: Margin before the test binary's
// deadline, or half-way to it when that is nearer than twice Margin.
func Deadline(t TB) (time.Time, bool) {
	dt, ok := t.(interface{ Deadline() (time.Time, bool) })
	if !ok {
		return time.Time{}, false
	}
	d, ok := dt.Deadline()
	if !ok {
		return time.Time{}, false
	}
	if left := time.Until(d); left < 2*Margin {
		return d.Add(-left / 2), true
	}
	return d.Add(-Margin), true
}
