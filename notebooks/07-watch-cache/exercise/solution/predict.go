// Package solution is the reference solution of chapter 7's lab.
package solution

import (
	"strconv"

	"github.com/cachelab/cachelab/notebooks/07-watch-cache/exercise/model"
)

// world is etcd's history and the watch cache's state.
type world struct {
	history []int // how many pods etcd held at each revision: history[rev]
	pods    map[string]bool
	cached  int  // the revision the cache has taken in
	since   int  // the revision the cache listed etcd at: its oldest snapshot
	held    bool // the cache takes in nothing
	ready   bool // the cache has listed etcd
}

func (w *world) rev() int { return len(w.history) - 1 }

// write is one revision: the pod key created (exists) or deleted.
func (w *world) write(key string, exists bool) {
	if exists {
		w.pods[key] = true
	} else {
		delete(w.pods, key)
	}
	w.history = append(w.history, len(w.pods))
	if !w.held {
		w.cached = w.rev()
	}
}

// Predict is the exercise's model of the cache delegator and the cacher,
// done.
func Predict(steps []model.Step) []model.Answer {
	// A fresh etcd is at revision 1, and the cache has listed it there.
	w := &world{history: []int{0, 0}, pods: map[string]bool{}, cached: 1, since: 1, ready: true}
	var out []model.Answer
	for _, st := range steps {
		switch st.Do {
		case "create":
			w.write(st.Key, true)
		case "delete":
			w.write(st.Key, false)
		case "hold-cache":
			w.held = true
		case "release-cache":
			w.held = false
			if !w.ready { // the held restart's list
				w.ready, w.since = true, w.rev()
			}
			w.cached = w.rev()
		case "restart-apiserver":
			// A new cache, which lists etcd at once, unless held.
			w.ready = !w.held
			w.cached, w.since = w.rev(), w.rev()
		case "list":
			out = append(out, w.list(st))
		}
	}
	return out
}

// list answers one LIST, as the cache delegator routes it and the cacher
// serves it.
func (w *world) list(st model.Step) model.Answer {
	rv, _ := strconv.Atoi(st.ResourceVersion)
	exact := st.ResourceVersionMatch == "Exact" ||
		st.ResourceVersionMatch == "" && st.Limit > 0 && st.ResourceVersion != "" && st.ResourceVersion != "0"
	if exact && w.ready && rv <= w.cached && rv < w.since {
		return w.etcd(rv, st.Limit) // C1: before the cache's oldest snapshot
	}
	if !w.ready { // C5: only a LIST with a limit is passed on
		if st.Limit == 0 {
			return model.Answer{Source: "cache", Code: 429}
		}
		if exact {
			return w.etcd(rv, st.Limit)
		}
		return w.etcd(w.rev(), st.Limit)
	}
	switch {
	case st.ResourceVersion == "0": // C1, C2: what the cache holds, the limit ignored
		return w.cache(w.cached, 0)
	case st.ResourceVersion == "": // C1, C6: a consistent read
		if w.cached < w.rev() {
			return w.etcd(w.rev(), st.Limit) // after 3 s: the fallback
		}
		return w.cache(w.cached, st.Limit)
	case rv > w.cached: // C6: after 3 s, 504 Too large resource version
		return model.Answer{Source: "cache", Code: 504}
	case exact: // C1: the cache's snapshot at rv
		return w.cache(rv, st.Limit)
	}
	return w.cache(w.cached, st.Limit) // not older than rv
}

// cache is the cache's answer at revision rev, at most limit pods.
func (w *world) cache(rev int, limit int64) model.Answer {
	return model.Answer{Source: "cache", ResourceVersion: strconv.Itoa(rev), Items: capped(w.history[rev], limit)}
}

// etcd is etcd's answer at revision rev.
func (w *world) etcd(rev int, limit int64) model.Answer {
	return model.Answer{Source: "etcd", ResourceVersion: strconv.Itoa(rev), Items: capped(w.history[rev], limit)}
}

func capped(n int, limit int64) int {
	if limit > 0 && int64(n) > limit {
		return int(limit)
	}
	return n
}
