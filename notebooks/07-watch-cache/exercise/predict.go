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
// pods) and a watch cache that has listed it there and is ready. The
// rules to reproduce (REFERENCE.md, and the chapter's README):
//
//   - C1: a LIST at "0" is the cache's: what it holds, whatever the
//     Limit (it ignores it at "0"). At "" (a consistent read) it is the
//     cache's too, at etcd's current revision, the Limit applied. At N
//     with NotOlderThan, or with no match and no Limit, it is what the
//     cache holds, once that is at least N. At N with Exact, or with a
//     Limit, it is an exact read: the state at revision N, from the
//     cache's snapshot at N when it has one (N is not older than the
//     revision the cache listed etcd at, when it started or restarted),
//     from etcd when N is older;
//   - C2: while held, the cache holds what etcd had when it was held; on
//     release it has all of etcd again;
//   - C6: a LIST the cache must wait for (at "", or at an N past what it
//     holds) waits 3 s (the lab moves the server's clock on); then a
//     consistent read is answered by etcd instead, at its current
//     revision, and any other one is refused with 504;
//   - C5: after a restart while held, the cache is not ready until
//     released: a LIST with a Limit goes to etcd (at N for an exact
//     read, else at its current revision), any other is refused with 429
//     by the cache.
//
// Whoever answers applies the Limit (except the cache at "0"): at most
// Limit pods.
func Predict(steps []Step) []Answer {
	// TODO: keep etcd's history (which pods exist at each revision) and
	// the cache's state, and answer each "list".
	return nil
}
