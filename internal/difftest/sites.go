package difftest

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Sites: where a log line says it was logged. klog prints a file:line
// with every line, and a library that logs on behalf of its caller (as
// client-go's WaitFor does, through logr's WithCallStackHelper) makes
// that the caller's line, not its own. A logr sink learns the site in
// one of two ways, and such a library serves both:
//
//   - CallDepth: the sink counts frames (klog, zapr, funcr); the library
//     adds its own with WithCallDepth.
//   - CallStackHelper: the sink skips the frames of functions marked as
//     helpers, as testing.T.Helper does (ktesting); the library calls
//     the helper logr hands out.
//
// A site is rendered so that the two implementations can be compared:
// "library" for a frame in the code under test (a cachelab package or
// client-go), the import path for another package (apimachinery's
// error handling, logr, the Go runtime: a depth that went too far or
// not far enough), and file:line for the caller's code (tests call both
// sides through one line, so that it is the same).

// SiteMode is how a recording sink finds where a line was logged.
type SiteMode int

const (
	// CallDepth counts frames, with WithCallDepth's additions.
	CallDepth SiteMode = iota
	// CallStackHelper skips the frames of helper functions.
	CallStackHelper
)

// siteOf renders the frame skip levels above its caller, for a sink
// method called straight from logr's Logger (its RuntimeInfo.CallDepth
// is 1): siteOf(2+depth) in the sink is the line that called the logger.
func siteOf(skip int) string {
	pc, file, line, ok := runtime.Caller(skip + 1)
	if !ok {
		return "(no frame)"
	}
	return render(runtime.FuncForPC(pc).Name(), file, line)
}

// render names a frame as sites are compared (see above).
func render(function, file string, line int) string {
	pkg := packageOf(function)
	switch {
	case strings.HasPrefix(pkg, "github.com/cachelab/cachelab/") && !strings.HasSuffix(pkg, "_test") &&
		pkg != "github.com/cachelab/cachelab/internal/difftest",
		strings.HasPrefix(pkg, "k8s.io/client-go/"):
		return "library"
	case strings.HasPrefix(pkg, "github.com/cachelab/cachelab/"):
		return fmt.Sprintf("%s:%d", filepath.Base(file), line)
	}
	return pkg
}

// packageOf is the import path of a function's package, from its full
// name ("k8s.io/client-go/tools/cache.WaitFor.func1": the path up to
// the first dot after the last slash).
func packageOf(function string) string {
	slash := strings.LastIndexByte(function, '/')
	if dot := strings.IndexByte(function[slash+1:], '.'); dot >= 0 {
		return function[:slash+1+dot]
	}
	return function
}

// helpers is what a CallStackHelper sink's helper marked: the functions
// whose frames a site skips, as testing.T.Helper's are.
type helpers struct {
	mu    sync.Mutex
	funcs map[string]bool
}

// helper is the helper logr hands out: it marks the function that
// calls it.
func (h *helpers) helper() func() { return func() { h.mark(2) } }

// mark marks the function skip frames above it.
func (h *helpers) mark(skip int) {
	pc, _, _, ok := runtime.Caller(skip)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.funcs[runtime.FuncForPC(pc).Name()] = true
}

// site is the first frame above skip whose function is not a helper.
func (h *helpers) site(skip int) string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(skip+2, pcs)])
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		f, more := frames.Next()
		if !h.funcs[f.Function] {
			return render(f.Function, f.File, f.Line)
		}
		if !more {
			return "(only helpers)"
		}
	}
}

// HandledSite is, called from a utilruntime.ErrorHandler, where the
// report says it happened: the caller of HandleError* (handler <-
// handleError <- HandleError* <- caller), as utilruntime's own logError
// finds it.
func HandledSite() string { return siteOf(4) }
