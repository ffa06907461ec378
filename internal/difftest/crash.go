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
	log   *Log
	name  string // which logger: "handler h", "informer"
	kv    []any  // WithValues
	depth int    // WithCallDepth: frames between a site and its logging call
}

func (s *crashSink) Init(logr.RuntimeInfo)  {}
func (s *crashSink) Enabled(level int) bool { return level == 0 }

func (s *crashSink) Info(_ int, msg string, kv ...any) {
	if msg == "PanicHandler" {
		s.record(siteOf(2+s.depth), "info", nil, msg, kv)
	}
}

// Error records panics and what utilruntime.HandleError* reported (Quiet
// routes those here), each with where it says it happened: the function
// that deferred HandleCrash*, the caller of HandleError* (both add frames
// with WithCallDepth).
func (s *crashSink) Error(err error, msg string, kv ...any) {
	s.record(siteOf(2+s.depth), "error", err, msg, kv)
}

func (s *crashSink) record(site, level string, err error, msg string, kv []any) {
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
	s.log.Add("%s: %s %q err=%v %s @%s", s.name, level, msg, err, strings.Join(parts, " "), site)
}

func (s *crashSink) WithValues(kv ...any) logr.LogSink {
	return &crashSink{log: s.log, name: s.name, kv: append(append([]any{}, s.kv...), kv...), depth: s.depth}
}

func (s *crashSink) WithCallDepth(depth int) logr.LogSink {
	c := *s
	c.depth += depth
	return &c
}

func (s *crashSink) WithName(string) logr.LogSink { return s }

// InfoLogger is a logger that records, in log, every level-0 Info entry:
// its message, its keys and values in order, and where it was logged
// (@site, found by counting frames: see SiteMode).
func InfoLogger(log *Log) klog.Logger { return SiteLogger(log, CallDepth) }

// SiteLogger is InfoLogger with the way its sink finds a line's site.
func SiteLogger(log *Log, mode SiteMode) klog.Logger {
	base := infoSink{log: log}
	if mode == CallStackHelper {
		return logr.New(&helperSink{infoSink: base, helpers: &helpers{funcs: map[string]bool{}}})
	}
	return logr.New(&depthSink{infoSink: base})
}

// infoSink records Info entries; the sinks around it say where they
// were logged.
type infoSink struct {
	log *Log
	kv  []any
}

func (s *infoSink) Init(logr.RuntimeInfo)       {}
func (s *infoSink) Enabled(level int) bool      { return level == 0 }
func (s *infoSink) Error(error, string, ...any) {}

func (s *infoSink) record(site, msg string, kv []any) {
	all := append(append([]any{}, s.kv...), kv...)
	parts := []string{fmt.Sprintf("%q", msg)}
	for i := 0; i+1 < len(all); i += 2 {
		parts = append(parts, fmt.Sprintf("%v=%v", all[i], all[i+1]))
	}
	s.log.Add("%s @%s", strings.Join(parts, " "), site)
}

func (s infoSink) with(kv []any) infoSink {
	return infoSink{log: s.log, kv: append(append([]any{}, s.kv...), kv...)}
}

// depthSink finds a site by counting frames, as klog does, with what
// WithCallDepth added.
type depthSink struct {
	infoSink
	depth int
}

func (s *depthSink) Info(_ int, msg string, kv ...any) { s.record(siteOf(2+s.depth), msg, kv) }
func (s *depthSink) WithName(string) logr.LogSink      { return s }
func (s *depthSink) WithValues(kv ...any) logr.LogSink {
	return &depthSink{infoSink: s.infoSink.with(kv), depth: s.depth}
}
func (s *depthSink) WithCallDepth(depth int) logr.LogSink {
	return &depthSink{infoSink: s.infoSink, depth: s.depth + depth}
}

// helperSink finds a site by skipping helpers' frames, as ktesting does
// with testing.T.Helper; it does not count frames.
type helperSink struct {
	infoSink
	helpers *helpers
}

func (s *helperSink) Info(_ int, msg string, kv ...any) { s.record(s.helpers.site(1), msg, kv) }
func (s *helperSink) WithName(string) logr.LogSink      { return s }
func (s *helperSink) WithValues(kv ...any) logr.LogSink {
	return &helperSink{infoSink: s.infoSink.with(kv), helpers: s.helpers}
}
func (s *helperSink) GetCallStackHelper() func() { return s.helpers.helper() }

var (
	_ logr.CallDepthLogSink       = (*depthSink)(nil)
	_ logr.CallStackHelperLogSink = (*helperSink)(nil)
)
