package controllertest

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
)

// running is a controller Run started.
type running struct {
	run       func(ctx context.Context) error
	cancel    context.CancelFunc
	done      chan struct{}
	err       error // what it returned, once done is closed
	stopped   bool  // by the story's stop: its return is no surprise
	restarted bool  // started anew by the story's start
}

// Run starts a controller in the world: run is called on a goroutine of
// its own, with a context that ends at Close, and should return only
// then (a controller's Run(ctx) usually does). Every goroutine it starts,
// and every goroutine those start, carries the world's label for the
// controller: that is how Settle tells the controller's goroutines from
// the rest of the process, and knows when they have all parked.
//
// A controller that returns before Close has stopped: the next Settle
// says so, with what it returned.
func (w *World) Run(run func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{run: run, cancel: cancel, done: make(chan struct{})}
	w.mu.Lock()
	w.running = append(w.running, r)
	w.mu.Unlock()
	go pprof.Do(ctx, pprof.Labels(controllerLabel, w.id), func(ctx context.Context) {
		defer close(r.done)
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("panic: %v", p)
			}
		}()
		r.err = run(ctx)
	})
}

// stop ends the controller and waits for it.
func (r *running) stop() error {
	r.cancel()
	<-r.done
	if errors.Is(r.err, context.Canceled) {
		return nil
	}
	return r.err
}

// stopped is the first controller that has returned while the world
// runs, and what it returned.
func (w *World) stopped() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.running {
		if r.stopped {
			continue
		}
		select {
		case <-r.done:
			return fmt.Errorf("controllertest: the controller returned before the world closed: %v", r.err)
		default:
		}
	}
	return nil
}

// controllersRunning reports whether a controller Run started has not
// been stopped by the story.
func (w *World) controllersRunning() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.running {
		if !r.stopped {
			return true
		}
	}
	return false
}

// stopControllers stops every controller running, as its process would
// end: its context ends, and the world waits for it to return.
func (w *World) stopControllers() error {
	w.mu.Lock()
	var rs []*running
	for _, r := range w.running {
		if !r.stopped {
			r.stopped = true
			rs = append(rs, r)
		}
	}
	w.mu.Unlock()
	var errs []error
	for _, r := range rs {
		errs = append(errs, r.stop())
	}
	return errors.Join(errs...)
}

// startControllers starts anew every controller the story stopped, as a
// new process: fresh informers, fresh queues, nothing kept.
func (w *World) startControllers() {
	w.mu.Lock()
	var again []func(context.Context) error
	for _, r := range w.running {
		if r.stopped && !r.restarted {
			r.restarted = true
			again = append(again, r.run)
		}
	}
	w.mu.Unlock()
	for _, run := range again {
		w.Run(run)
	}
}
