package lab

import (
	"fmt"
	"runtime"
	"strings"
)

// PanicError is a check's error when the code under check panicked: what
// it panicked with, the line of the code under check where it did (the
// innermost one on the stack), and, when the panic was raised deeper, in
// code the learner called, where that was.
type PanicError struct {
	Value any
	At    string // "loop.go:52, in (*Limiter).When"; "" if the code under check is not on the stack
	Site  string // "workqueue.(*Typed[...]).Done (queue.go:123)"; "" when raised at At
}

func (e *PanicError) Error() string {
	s := "your code panicked"
	if e.At != "" {
		s += " at " + e.At
	}
	s += ": " + fmt.Sprint(e.Value)
	if e.Site != "" {
		s += "\n(raised inside " + e.Site + ")"
	}
	return s
}

// Safely runs f and returns its error; a panic in f is returned as a
// *PanicError, so an unfinished exercise reports, with the line that
// panicked, rather than crashes.
func Safely(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = panicked(r)
		}
	}()
	return f()
}

// panicked reads the stack of the panic being recovered: the frames
// past runtime.gopanic are the panicking code's, innermost first. A panic
// raised again by a deferred function stacks a second gopanic on the
// first, whose frames are still there: the place is the first panic's.
// Called from Safely's deferred function.
func panicked(r any) *PanicError {
	pcs := make([]uintptr, 128)
	n := runtime.Callers(3, pcs) // runtime.Callers, panicked, Safely's deferred func
	frames := runtime.CallersFrames(pcs[:n])
	e := &PanicError{Value: r}
	inPanic, site := false, ""
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			inPanic, site = true, ""
		case !inPanic || strings.HasPrefix(f.Function, "runtime."):
		case inLab(f):
			return e
		case underCheck(f):
			e.At, e.Site = fileLine(f.File, f.Line)+", in "+shortName(f.Function), site
			return e
		case site == "":
			site = f.Function[strings.LastIndex(f.Function, "/")+1:] + " (" + fileLine(f.File, f.Line) + ")"
		}
		if !more {
			return e
		}
	}
}
