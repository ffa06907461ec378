package controller

import "context"

// ProcessNextWorkItem is one turn of a worker: take a key, reconcile it,
// decide when it comes back, and mark it done (K2-K5). It returns false
// once the queue is shut down and drained; it blocks while the queue is
// empty. Tests and simulators call it directly to step the loop.
func (c *Controller) ProcessNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	c.trace(Event{Kind: Get, Key: key})
	// Done comes last whatever happens, even a panic: a key never Done
	// stays held, and its later Adds are never handed out again (W2).
	defer c.done(key)
	c.process(ctx, key)
	return true
}

func (c *Controller) done(key string) {
	c.queue.Done(key)
	c.trace(Event{Kind: Done, Key: key})
}

// process reconciles key unless the guard holds it back, and requeues it
// by the result.
func (c *Controller) process(ctx context.Context, key string) {
	if c.guard != nil {
		if stale, why := c.guard.stale(key); stale {
			c.trace(Event{Kind: Stale, Key: key, Detail: why})
			c.queue.AddRateLimited(key) // K8: back off, keep counting
			return
		}
	}
	res, err := c.reconcile(ctx, key)
	if c.guard != nil && res.Wrote != "" {
		c.guard.wrote(key, res.Wrote)
	}
	c.trace(Event{Kind: Reconciled, Key: key, Result: res, Err: err})
	c.requeue(key, res, err)
}

// requeue applies the rules controllers share (K3-K5):
//
//	error                  → AddRateLimited: back off, the failure counted
//	requeue-after d, no error → Forget, AddAfter(d): a timer, not a failure
//	success                → Forget: the next failure starts at the base delay
//
// An error wins over RequeueAfter, as in controller-runtime: the
// requested delay is dropped and the key backs off instead.
func (c *Controller) requeue(key string, res Result, err error) {
	switch {
	case err != nil:
		c.queue.AddRateLimited(key)
	case res.RequeueAfter > 0:
		c.forget(key)
		c.trace(Event{Kind: AddAfter, Key: key, Delay: res.RequeueAfter})
		c.queue.AddAfter(key, res.RequeueAfter)
	default:
		c.forget(key)
	}
}

// forget forgets key's failures, unless the loop has the SkipForget bug.
func (c *Controller) forget(key string) {
	if c.noForget {
		return
	}
	c.queue.Forget(key)
	c.trace(Event{Kind: Forget, Key: key})
}
