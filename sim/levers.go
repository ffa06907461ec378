package sim

import (
	"fmt"

	"github.com/cachelab/cachelab/sim/scenario"
)

// A lever is a value: where it can be pulled, and what it does. Where is
// its own answer (package sim/lever: the parts of a world it needs),
// asked of the run's world before the first step (Check) and again at
// each step (runner.worldAllows): a world that lacks a part refuses the
// step with the lever's reason, the same in every world. What it does is
// its pull (runs.go), given the part of the world it acts on:
//
//	anyPart      the runner's own: the informers, the clock, the writes
//	storagePart  kube-apiserver's storage on etcd (etcdWorld, and the
//	             worlds built on it): etcd's keys, history, members
//	cachePart    kube-apiserver's watch caches (cacheWorld, httpsWorld)
//
// A world has a part when its type does (storageWorld, cachedWorld); a
// pull finds it there. TestEveryLeverFindsItsPart holds the two answers
// to each other: a lever available in a world finds its part in that
// world's type.
type pull struct {
	part part
	do   func(r *runner, a scenario.Args) error
}

// part is a part of a world that a pull acts on.
type part int

const (
	anyPart part = iota
	storagePart
	cachePart
)

func (p part) String() string {
	return [...]string{"any world", "kube-apiserver's storage on etcd", "kube-apiserver's watch cache"}[p]
}

// onRunner is a pull that acts on the runner's own parts.
func onRunner(do func(r *runner, a scenario.Args) error) pull { return pull{anyPart, do} }

// onStorage is a pull that acts on the world's storage on etcd.
func onStorage(do func(w *etcdWorld, a scenario.Args) error) pull {
	return pull{storagePart, func(r *runner, a scenario.Args) error { return do(r.storage(), a) }}
}

// onCaches is a pull that acts on the world's watch caches.
func onCaches(do func(w *cacheWorld, a scenario.Args) error) pull {
	return pull{cachePart, func(r *runner, a scenario.Args) error { return do(r.caches(), a) }}
}

// in reports whether world w has the part p acts on.
func (p pull) in(w runWorld) bool {
	switch p.part {
	case storagePart:
		_, ok := w.(storageWorld)
		return ok
	case cachePart:
		_, ok := w.(cachedWorld)
		return ok
	}
	return true
}

// pull pulls the lever of command cmd in r's world. The step's guard has
// asked the lever's availability; a world without the part is a lever
// whose needs (package sim/lever) do not say what it acts on.
func (p pull) pull(r *runner, cmd string, a scenario.Args) error {
	if !p.in(r.where) {
		return fmt.Errorf("%s acts on %s, which this world (%T) has none of; its needs in package sim/lever should have refused it", cmd, p.part, r.where)
	}
	return p.do(r, a)
}

// storage is the world's storage on etcd, or nil in a world without
// one of the run's own (a cluster, a replay).
func (r *runner) storage() *etcdWorld {
	if w, ok := r.where.(storageWorld); ok {
		return w.storage()
	}
	return nil
}

// caches is the world's watch caches, or nil.
func (r *runner) caches() *cacheWorld {
	if w, ok := r.where.(cachedWorld); ok {
		return w.caches()
	}
	return nil
}

// cached reports whether the run's world has a watch cache of its own.
func (r *runner) cached() bool { return r.caches() != nil }
