package listwatch

import (
	"context"
	"sync"
)

// controls are the simulator's levers on a ListerWatcher's watches: drop
// the open ones (a broken connection), and hold new ones back (so that
// something, a compaction say, can happen before a client re-watches).
type controls struct {
	mu   sync.Mutex
	open map[*watcher]struct{}
	held chan struct{} // closed by Release; nil while not held
}

// HoldWatches makes new watch calls wait until ReleaseWatches.
func (lw *ListerWatcher) HoldWatches() {
	lw.ctl.mu.Lock()
	defer lw.ctl.mu.Unlock()
	if lw.ctl.held == nil {
		lw.ctl.held = make(chan struct{})
	}
}

// ReleaseWatches lets held watch calls proceed.
func (lw *ListerWatcher) ReleaseWatches() {
	lw.ctl.mu.Lock()
	defer lw.ctl.mu.Unlock()
	if lw.ctl.held != nil {
		close(lw.ctl.held)
		lw.ctl.held = nil
	}
}

// DropWatches ends every open watch as a dropped connection would: the
// result channel closes without an Error event. It returns how many it
// ended.
func (lw *ListerWatcher) DropWatches() int {
	lw.ctl.mu.Lock()
	open := make([]*watcher, 0, len(lw.ctl.open))
	for w := range lw.ctl.open {
		open = append(open, w)
	}
	lw.ctl.mu.Unlock()
	for _, w := range open {
		w.Stop()
	}
	return len(open)
}

// OpenWatches is how many watches are open now.
func (lw *ListerWatcher) OpenWatches() int {
	lw.ctl.mu.Lock()
	defer lw.ctl.mu.Unlock()
	return len(lw.ctl.open)
}

// admit waits while watches are held, then registers w as open.
func (lw *ListerWatcher) admit(ctx context.Context, w *watcher) error {
	for {
		lw.ctl.mu.Lock()
		held := lw.ctl.held
		if held == nil {
			if lw.ctl.open == nil {
				lw.ctl.open = map[*watcher]struct{}{}
			}
			lw.ctl.open[w] = struct{}{}
			lw.ctl.mu.Unlock()
			return nil
		}
		lw.ctl.mu.Unlock()
		select {
		case <-held:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// forget unregisters a watch that has ended.
func (lw *ListerWatcher) forget(w *watcher) {
	lw.ctl.mu.Lock()
	defer lw.ctl.mu.Unlock()
	delete(lw.ctl.open, w)
}
