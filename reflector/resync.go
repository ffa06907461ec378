package reflector

import "context"

// resyncLoop calls Store.Resync every ResyncPeriod on the reflector's
// clock while the watch runs, if ShouldResync allows (F7). A failed
// Resync is sent on errs, which ends the watch (and so relists).
func (r *Reflector) resyncLoop(ctx context.Context, errs chan<- error) {
	if r.opts.ResyncPeriod == 0 {
		return
	}
	for {
		t := r.clock.NewTimer(r.opts.ResyncPeriod)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
		if err := r.Resync(); err != nil {
			errs <- err
			return
		}
	}
}

// Resync is one resync tick: Store.Resync if ShouldResync (nil: always)
// says so. The simulator calls it directly to resync on demand.
func (r *Reflector) Resync() error {
	if r.opts.ShouldResync != nil && !r.opts.ShouldResync() {
		return nil
	}
	r.trace(Event{Step: StepResync})
	return r.store.Resync()
}
