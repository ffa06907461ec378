package informer

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	"k8s.io/klog/v2"
)

// DoneChecker is something to wait for without polling: a channel closed
// when it is done, and a name for the logs (client-go v0.36). An
// informer's HasSyncedChecker is done once it has synced; a
// registration's once its handler has also handled the initial list.
type DoneChecker interface {
	// Name says what is waited for.
	Name() string
	// Done is closed when it is done.
	Done() <-chan struct{}
}

// IsDone reports, without waiting, whether c is done.
func IsDone(c DoneChecker) bool {
	select {
	case <-c.Done():
		return true
	default:
		return false
	}
}

// WaitFor waits until every checker is done (true) or ctx ends first
// (false). It does not poll: it reacts as soon as a checker's channel
// closes, so in a testing/synctest bubble it returns without moving the
// clock. With a non-empty what it logs through ctx's logger, as client-go
// does: "Waiting" (for=what), "Done waiting" for each checker as it is
// done (instance=its name), and, if ctx ended first, "Timed out waiting"
// with the cause and the sorted names of those not done. Each line says
// it was logged where WaitFor was called, not in WaitFor (P22). (client-go:
// WaitFor, v0.36.)
func WaitFor(ctx context.Context, what string, checkers ...DoneChecker) bool {
	logger := klog.FromContext(ctx)
	if what != "" {
		// The caller's file and line (P22): logr's WithCallStackHelper
		// gives a sink that counts frames one more (WithCallDepth), and
		// one that skips helpers' frames (as testing.T.Helper does) a
		// helper to call from the function to skip: here, not in a
		// function of its own. The lines are logged from this goroutine
		// for the same reason: another's stack does not lead back to the
		// caller.
		helper, l := logger.WithCallStackHelper()
		helper()
		logger = l
		logger.Info("Waiting", "for", what)
	}
	type result struct {
		checker DoneChecker
		done    bool
	}
	results := make(chan result)
	var wg sync.WaitGroup
	for _, c := range checkers {
		wg.Go(func() {
			select {
			case <-c.Done():
				results <- result{c, true}
			case <-ctx.Done():
				// Both may be ready: a done checker counts as done.
				results <- result{c, IsDone(c)}
			}
		})
	}
	var notDone []string
	for range checkers {
		r := <-results
		switch {
		case !r.done:
			notDone = append(notDone, r.checker.Name())
		case what != "":
			logger.Info("Done waiting", "for", what, "instance", r.checker.Name())
		}
	}
	wg.Wait()
	if what != "" && len(notDone) > 0 {
		slices.Sort(notDone)
		logger.Info("Timed out waiting", "for", what, "cause", context.Cause(ctx), "instances", notDone)
	}
	return len(notDone) == 0
}

// HasSyncedChecker is done once the informer has synced: its queue has
// delivered the first list (HasSynced).
func (s *SharedIndexInformer) HasSyncedChecker() DoneChecker {
	return checker{name: s.checkerName(), done: s.synced}
}

func (s *SharedIndexInformer) checkerName() string {
	return fmt.Sprintf("SharedIndexInformer %T", s.opts.ExampleObject)
}

// HasSyncedChecker is done once the informer has synced and the handler
// has returned from every initial-list OnAdd (HasSynced, P9).
func (l *listener) HasSyncedChecker() DoneChecker {
	return checker{name: l.checkerName, done: l.synced.done}
}

type checker struct {
	name string
	done <-chan struct{}
}

func (c checker) Name() string          { return c.name }
func (c checker) Done() <-chan struct{} { return c.done }

// handlerName names a handler in its registration's checker, as client-go
// does: ResourceEventHandlerFuncs by their functions (their common
// qualifier, when all are defined in one place), anything else by its
// package path and type name.
func handlerName(h ResourceEventHandler) (name string) {
	defer func() {
		if name == "" {
			name = fmt.Sprintf("%T", h)
		}
	}()
	switch f := h.(type) {
	case nil:
		return ""
	case ResourceEventHandlerFuncs:
		return functionsName(f.AddFunc, f.UpdateFunc, f.DeleteFunc)
	case *ResourceEventHandlerFuncs:
		return functionsName(f.AddFunc, f.UpdateFunc, f.DeleteFunc)
	}
	v := reflect.ValueOf(h)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	name = v.Type().PkgPath()
	if name != "" {
		name += "."
	}
	return name + v.Type().Name()
}

func functionsName(fs ...any) string {
	qualifier, single := "", true
	var names []string
	for _, f := range fs {
		if reflect.ValueOf(f).IsNil() {
			continue
		}
		fn := runtime.FuncForPC(reflect.ValueOf(f).Pointer())
		if fn == nil || fn.Name() == "" {
			continue
		}
		name := fn.Name()
		names = append(names, name)
		q := name
		if i := strings.LastIndexByte(q, '.'); i > 0 {
			q = q[:i]
		}
		switch qualifier {
		case "":
			qualifier = q
		case q:
		default:
			single = false
		}
	}
	if single {
		return qualifier
	}
	return strings.Join(names, "+")
}
