package difftest

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// Panics, as client-go handles them: utilruntime.HandleCrash* logs
// "Observed a panic" through a contextual logger, runs
// utilruntime.PanicHandlers, and crashes unless utilruntime.ReallyCrash
// is false. A world records, per side, what its logger was given and
// which panic handlers ran, so the two sides can be compared.

// Panic, given to FailNextList or FailNextWatch, makes that call panic
// with Value instead of failing: a ListerWatcher with a bug.
type Panic struct{ Value any }

func (p Panic) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// CatchPanics sets utilruntime.ReallyCrash to false for the test, so that
// a recovered panic does not crash the process, and adds a panic handler
// that says, through the logger it is given, that it ran. Both are
// process-wide: a test that calls it must not run in parallel.
func CatchPanics(t *testing.T) {
	really, handlers := utilruntime.ReallyCrash, utilruntime.PanicHandlers
	utilruntime.ReallyCrash = false
	utilruntime.PanicHandlers = append(append([]func(context.Context, any){}, handlers...), func(ctx context.Context, r any) {
		klog.FromContext(ctx).Info("PanicHandler", "value", r)
	})
	t.Cleanup(func() { utilruntime.ReallyCrash, utilruntime.PanicHandlers = really, handlers })
}

// crashLogger is a logger that records, in log, every error entry: those
// panics make ("Observed a panic" with its keys and values, the stack
// trace left out: the two implementations' stacks differ) and those of
// utilruntime.HandleError* (see Quiet); and the PanicHandler entries of
// CatchPanics. Other Info entries are dropped.
func crashLogger(log *Log, name string) klog.Logger {
	return logr.New(&crashSink{log: log, name: name})
}

type crashSink struct {
	log  *Log
	name string // which logger: "handler h", "informer"
	kv   []any  // WithValues
}

func (s *crashSink) Init(logr.RuntimeInfo)  {}
func (s *crashSink) Enabled(level int) bool { return level == 0 }

func (s *crashSink) Info(_ int, msg string, kv ...any) {
	if msg == "PanicHandler" {
		s.record("info", nil, msg, kv)
	}
}

// Error records panics and what utilruntime.HandleError* reported (Quiet
// routes those here).
func (s *crashSink) Error(err error, msg string, kv ...any) {
	s.record("error", err, msg, kv)
}

func (s *crashSink) record(level string, err error, msg string, kv []any) {
	all := append(append([]any{}, s.kv...), kv...)
	var parts []string
	for i := 0; i+1 < len(all); i += 2 {
		v := fmt.Sprint(all[i+1])
		if all[i] == "reflector" {
			v = "(its name)" // client-go's names the caller's file and line
		}
		if all[i] == "stacktrace" {
			v = "(a stack)"
			if !strings.Contains(fmt.Sprint(all[i+1]), "goroutine ") {
				v = "(no stack)"
			}
		}
		parts = append(parts, fmt.Sprintf("%v=%q", all[i], v))
	}
	sort.Strings(parts)
	s.log.Add("%s: %s %q err=%v %s", s.name, level, msg, err, strings.Join(parts, " "))
}

func (s *crashSink) WithValues(kv ...any) logr.LogSink {
	return &crashSink{log: s.log, name: s.name, kv: append(append([]any{}, s.kv...), kv...)}
}

func (s *crashSink) WithName(string) logr.LogSink { return s }

// InfoLogger is a logger that records, in log, every level-0 Info entry:
// its message and its keys and values, in order.
func InfoLogger(log *Log) klog.Logger {
	return logr.New(&infoSink{log: log})
}

type infoSink struct {
	log *Log
	kv  []any
}

func (s *infoSink) Init(logr.RuntimeInfo)        {}
func (s *infoSink) Enabled(level int) bool       { return level == 0 }
func (s *infoSink) Error(error, string, ...any)  {}
func (s *infoSink) WithName(string) logr.LogSink { return s }

func (s *infoSink) Info(_ int, msg string, kv ...any) {
	all := append(append([]any{}, s.kv...), kv...)
	parts := []string{fmt.Sprintf("%q", msg)}
	for i := 0; i+1 < len(all); i += 2 {
		parts = append(parts, fmt.Sprintf("%v=%v", all[i], all[i+1]))
	}
	s.log.Add("%s", strings.Join(parts, " "))
}

func (s *infoSink) WithValues(kv ...any) logr.LogSink {
	return &infoSink{log: s.log, kv: append(append([]any{}, s.kv...), kv...)}
}
