// Package source notes where a LIST's answer came from: kube-apiserver's
// watch cache or etcd. It is apart from package apistorage, which fills
// it in, so that what reads it (the scenario's connections, in sim/world)
// does not pull kube-apiserver's storage into every build.
package source

import "context"

// Source is where a request's answer came from: the watch cache, or
// etcd (a request the cache delegator passed on, or any request without
// the cache).
type Source struct {
	Etcd   bool   // etcd answered, not the cache
	Server string // the server's name (apistorage's Options.Name), if it has one
}

func (s *Source) String() string {
	if s == nil {
		return ""
	}
	where := "cache"
	if s.Etcd {
		where = "etcd"
	}
	if s.Server != "" {
		return s.Server + "'s " + where
	}
	return where
}

type key struct{}

// With returns a context that notes where a LIST's answer comes from;
// read it from the Source once the LIST has returned.
func With(ctx context.Context) (context.Context, *Source) {
	s := &Source{}
	return context.WithValue(ctx, key{}, s), s
}

// Of is the Source a context notes a LIST's answer in (With), or nil: a
// server in front of the storage (kube-apiserver over HTTP) fills in its
// client's from its own.
func Of(ctx context.Context) *Source {
	s, _ := ctx.Value(key{}).(*Source)
	return s
}
