package controllertest

import (
	"context"
	"errors"
	"fmt"
	"runtime/pprof"
	"slices"
	"time"
)

// A FaultKind is a fault Explore places, with the name of what heals it
// ("" for one that is over once pulled). A placed story says it in
// story commands: pulling and healing are the commands it puts at the
// fault's gap and at its heal's.
type FaultKind struct {
	Name, Heal, About string
	pulling, healing  []string
}

// Faults are the faults Explore places, in the order it tries them.
var Faults = []FaultKind{
	{"disconnect", "reconnect", "the controller's connections reset, and new ones wait, until reconnect: its watches end and resume where they were, its requests wait",
		[]string{"disconnect"}, []string{"reconnect"}},
	{"close-watch", "", "the server ends every watch of the controller, as at a watch's timeout",
		[]string{"close-watch"}, nil},
	{"compact", "", "etcd compacts its history: a watch or LIST from an older resourceVersion answers 410 Gone",
		[]string{"compact"}, nil},
	{"restart-apiserver", "", "kube-apiserver restarts: its watch caches end every watch and list etcd anew, and a watch from before answers 410 Gone",
		[]string{"restart-apiserver"}, nil},
	{"partition", "heal", "a disconnect that lasts while etcd compacts its history and kube-apiserver restarts: the controller's watches cannot resume, and it relists; what was deleted meanwhile it learns of only as missing (a DeletedFinalStateUnknown)",
		[]string{"disconnect"}, []string{"compact", "restart-apiserver", "reconnect"}},
	{"stop", "start", "the controller stops, as its process ends, until start starts it anew: fresh informers that list what is there then, and see no event of what happened meanwhile",
		[]string{"stop"}, []string{"start"}},
	{"hold-cache", "release-cache", "the watch caches stop taking in etcd's events until release-cache: the controller's reads fall behind",
		[]string{"hold-cache"}, []string{"release-cache"}},
}

// DefaultFaults are what Explore places when not told.
var DefaultFaults = []string{"disconnect", "close-watch", "compact", "restart-apiserver", "partition", "stop"}

// faultKind is the fault named name.
func faultKind(name string) (FaultKind, bool) {
	i := slices.IndexFunc(Faults, func(k FaultKind) bool { return k.Name == name })
	if i < 0 {
		return FaultKind{}, false
	}
	return Faults[i], true
}

// Fault pulls (or heals) the fault named name on the controller.
func (w *World) Fault(ctx context.Context, name string) error {
	switch name {
	case "disconnect", "close-watch", "restart-apiserver":
		if err := w.ageWatches(ctx); err != nil {
			return err
		}
	}
	switch name {
	case "disconnect":
		w.net.Cut(ControllerUser)
	case "reconnect":
		w.net.Restore(ControllerUser)
	case "close-watch":
		w.server.CloseWatches(ControllerUser)
	case "compact":
		rev, err := w.etcd.Revision(ctx)
		if err != nil {
			return err
		}
		if err := w.etcd.Compact(ctx, rev); err != nil {
			return fmt.Errorf("compact: %w", err)
		}
	case "restart-apiserver":
		return w.restartCaches(ctx)
	case "stop":
		if w.outside != nil && w.outside.isAttached() {
			// Attach's function would return, and the controller,
			// which is someone else's process, would go on.
			return errors.New("controllertest: stop: the controller was attached (Attach), not started by the world, which cannot stop it; leave stop out of the faults, or start it with Command")
		}
		return w.stopControllers()
	case "start":
		w.startControllers()
	case "hold-cache", "release-cache":
		for _, st := range w.storages {
			if !st.Cached() {
				continue
			}
			if name == "hold-cache" {
				st.HoldCache()
			} else {
				st.ReleaseCache()
			}
		}
	default:
		return fmt.Errorf("controllertest: no fault command %q; they are disconnect, reconnect, close-watch, compact, restart-apiserver, stop, start, hold-cache and release-cache", name)
	}
	return nil
}

// veryShortWatch is how long, on the wall clock, client-go's reflector
// wants a watch that sent no event to have lasted when it ends: shorter,
// it is a "very short watch", an error, and the reflector lists again;
// longer, it watches again from the resourceVersion it had.
const veryShortWatch = time.Second

// ageWatches waits, before a fault ends the controller's watches, until
// each that has sent no event is older than veryShortWatch. Without it,
// a watch opened a moment before (after a relist, or as the controller
// started) is very short on a quiet machine and not on a loaded one, and
// the controller lists again or watches again as the load had it. With
// it, every fault finds the controller's watches as a cluster's are,
// long open; a fault at the start of a story costs up to a second.
func (w *World) ageWatches(ctx context.Context) error {
	since := w.server.SilentSince(ControllerUser)
	if since.IsZero() {
		return nil
	}
	d := time.Until(since.Add(veryShortWatch))
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// restartCaches restarts every watch cache, as a restarted kube-apiserver
// starts its own: each old cache's watches end once the new one has
// listed etcd (apistorage's RestartCacheReady), and a watch from before
// then answers 410 Gone. The new caches' goroutines are the world's
// (labelled so), started from here.
func (w *World) restartCaches(ctx context.Context) error {
	var err error
	pprof.Do(ctx, w.labels(""), func(ctx context.Context) {
		for _, st := range w.storages {
			if !st.Cached() {
				continue
			}
			if err = st.RestartCacheReady(ctx); err != nil {
				return
			}
		}
	})
	return err
}

// Advance moves the world's clock on by d, stopping at each moment
// something is due on it (a timer of the controller's queues, a watch's
// deadline, a bookmark of the watch cache) and settling there, as time
// passes in a cluster: what fires at 10 s has happened, and been
// answered, before what fires at 20 s.
func (w *World) Advance(ctx context.Context, d time.Duration) error {
	end := w.clock.Now().Add(d)
	for {
		next, ok := w.nextWork()
		if !ok || next.After(end) {
			break
		}
		w.clock.SetTime(next)
		if err := w.SettleAndCollect(ctx); err != nil {
			return err
		}
	}
	w.clock.SetTime(end)
	return w.SettleAndCollect(ctx)
}

// nextWork is the earliest moment, after now, at which something is due
// on the world's clock: a timer of the clock's (the cache's own excluded:
// apistorage's cacherClock), or a watch cache's work. A cache does its
// work (a bookmark due) at the next tick of its one-second timer, so a
// cache with work due by now is given the second ahead.
func (w *World) nextWork() (time.Time, bool) {
	now := w.clock.Now()
	next, ok := w.clock.Next()
	for _, st := range w.storages {
		at, due := st.NextWork()
		if !due {
			continue
		}
		if !at.After(now) {
			at = now.Add(time.Second)
		}
		if !ok || at.Before(next) {
			next, ok = at, true
		}
	}
	if ok && !next.After(now) {
		next = now.Add(time.Nanosecond) // due already: fire it with the smallest step
	}
	return next, ok
}
