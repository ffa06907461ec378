// Package exercise is chapter 7's lab: predict what kube-apiserver's
// watch cache does with a LIST. Given a story of writes, cache holds and
// releases, restarts and LISTs, say for each LIST who answers it (the
// watch cache or etcd) and what it gets (its resourceVersion and how many
// pods, or the error's status code); then check it:
//
//	go test -tags lab -v ./notebooks/07-watch-cache/exercise
//
// Every story is also played against k8s.io/apiserver v0.37.2's real
// cacher and cache delegator over an embedded etcd. The reference
// solution is in solution/; try without it first.
package exercise

import "github.com/cachelab/cachelab/notebooks/07-watch-cache/exercise/model"

// Step is one thing that happens: a write, a cache hold or release, a
// restart, or a LIST (see model.Step).
type Step = model.Step

// Answer is what a LIST got: who answered, the list's resourceVersion and
// item count, or an error's status code (see model.Answer).
type Answer = model.Answer

// Predict returns, for each "list" step of steps in order, the answer
// kube-apiserver gives it. It starts from a fresh etcd (revision 1, no
// pods) and a watch cache that is ready and has taken in all of it.
// The rules to reproduce (REFERENCE.md):
//
//   - C1: the cache delegator sends a LIST to etcd when it has
//     ResourceVersionMatch Exact, or a Limit and a resourceVersion other
//     than "" and "0" (etcd then reads at exactly that revision); every
//     other LIST goes to the cache. At "0" the cache answers with what it
//     holds, whatever the Limit (it ignores it at "0"); at "" (a
//     consistent read) with etcd's current revision, the Limit applied;
//     at N (NotOlderThan, or no match and no limit) with what it holds
//     once that is at least N;
//   - C2: while held, the cache holds the state etcd had when it was
//     held; on release it has all of etcd again;
//   - C6: a LIST the cache must wait for (at "", or at N past what it
//     holds) waits 3 s (the lab moves the server's clock on); then a
//     consistent read is answered by etcd instead, at its current
//     revision, and any other one fails with 504;
//   - C5: after a restart while held, the cache is not ready until
//     released: a LIST with a Limit goes to etcd, any other gets 429
//     from the cache.
//
// etcd answers at the revision asked for, or its current one for "",
// "0" and NotOlderThan, with at most Limit pods (if Limit > 0).
func Predict(steps []Step) []Answer {
	// TODO: keep etcd's history (which pods exist at each revision) and
	// the cache's state, and answer each "list".
	return nil
}
