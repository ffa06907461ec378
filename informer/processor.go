package informer

import (
	"errors"
	"slices"
	"sync"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// processor fans notifications out to the listeners and keeps their resync
// schedule. It mirrors client-go's sharedProcessor.
type processor struct {
	clock clock.PassiveClock

	mu        sync.RWMutex
	listeners map[*listener]struct{}
	running   bool
	wg        sync.WaitGroup
}

func newProcessor(c clock.PassiveClock) *processor {
	return &processor{clock: c, listeners: map[*listener]struct{}{}}
}

// add registers l, and starts its delivery if the processor runs. It
// reports whether it did; the caller then hands l what it must hear first
// and calls watchUpstream. (A listener that watched for the informer's
// sync before its initial adds were counted could report HasSynced with
// none counted: client-go starts watchSynced after them, P9.)
func (p *processor) add(l *listener) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listeners[l] = struct{}{}
	if p.running {
		p.wg.Go(l.run)
	}
	return p.running
}

// watchUpstream starts l's watch for the informer's sync, once add has
// started it and it has been handed its initial adds.
func (p *processor) watchUpstream(l *listener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.listeners[l]; ok && p.running {
		p.wg.Go(l.watchUpstream)
	}
}

func (p *processor) startLocked(l *listener) {
	p.wg.Go(l.run)
	p.wg.Go(l.watchUpstream)
}

// errNotRegistration is returned for a handle RemoveEventHandler did not
// hand out.
var errNotRegistration = errors.New("informer: not a registration of this package")

// remove unregisters l; a listener that is not registered (any more) is no
// error, as in client-go.
func (p *processor) remove(l *listener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.listeners[l]; !ok {
		return
	}
	delete(p.listeners, l)
	l.stop()
	if !p.running {
		close(l.finished) // run never started, so it will not close it
	}
}

// distribute queues n for every listener; a sync notification (an update
// whose old and new have the same resourceVersion) only for listeners
// whose resync is due (P6).
func (p *processor) distribute(n Notification, sync bool) (skipped []string) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for l := range p.listeners {
		if !sync || l.due {
			l.add(n)
		} else {
			skipped = append(skipped, l.name)
		}
	}
	slices.Sort(skipped)
	return skipped
}

// run starts every listener.
func (p *processor) run() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for l := range p.listeners {
		p.startLocked(l)
	}
	p.running = true
}

// stop stops every listener (dropping what they had not delivered) and
// waits until no handler runs any more.
func (p *processor) stop() {
	func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for l := range p.listeners {
			l.stop()
		}
		p.listeners = map[*listener]struct{}{}
		p.running = false
	}()
	p.wg.Wait()
}

// shouldResync is the reflector's ShouldResync: it recomputes which
// listeners are due (P6) and reports whether any is. A due listener's next
// resync is scheduled one period from now.
func (p *processor) shouldResync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	any := false
	for l := range p.listeners {
		l.due = l.shouldResync(now)
		if l.due {
			any = true
			l.nextResync = now.Add(l.resyncPeriod)
		}
	}
	return any
}

// resyncCheckPeriodChanged re-derives every listener's period from what it
// asked for, after a handler added before start lowered the check period
// (P7).
func (p *processor) resyncCheckPeriodChanged(logger klog.Logger, check time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for l := range p.listeners { // map order, as client-go's
		l.resyncPeriod = effectiveResyncPeriod(logger, l.requestedResync, check)
	}
}

// effectiveResyncPeriod is a handler's period given the informer's check
// period (P7): 0 stays 0 (never); with a check period of 0 nobody resyncs;
// a period under the check period is raised to it. The last two are
// logged, in client-go's words (determineResyncPeriod).
func effectiveResyncPeriod(logger klog.Logger, requested, check time.Duration) time.Duration {
	switch {
	case requested == 0:
		return 0
	case check == 0:
		logger.Info("Warning: the specified resyncPeriod is invalid because this shared informer doesn't support resyncing", "desired", requested)
		return 0
	case requested < check:
		logger.Info("Warning: the specified resyncPeriod is being increased to the minimum resyncCheckPeriod", "desired", requested, "resyncCheckPeriod", check)
		return check
	}
	return requested
}

// backlog maps each listener's name to its unfinished notifications and
// to those only buffered, and adds to syncPending the listeners not yet
// told the informer synced.
func (p *processor) backlog(syncPending int) (unfinished, buffered map[string]int, _ int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	unfinished = make(map[string]int, len(p.listeners))
	buffered = make(map[string]int, len(p.listeners))
	for l := range p.listeners {
		unfinished[l.name] += l.unfinished()
		buffered[l.name] += l.pendingLen()
		if l.synced.settling() {
			syncPending++
		}
	}
	return unfinished, buffered, syncPending
}
