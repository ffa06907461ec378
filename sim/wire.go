package sim

import (
	"fmt"
	"net/url"

	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
	"github.com/cachelab/cachelab/tcpproxy"
)

// Over the wire (Options.Wire), every kube-apiserver's storage gets an
// HTTPS front, and each side an HTTP client of each front, made the first
// time its connection goes there (sim/world/wire.go), through a proxy on
// loopback of its own (package tcpproxy), where a disconnect cuts the
// connections:
//
//	cachelab's client ══▶ its proxy ──┐
//	                                  ├──▶ kube-apiserver 1 (and 2, ...)
//	client-go's client ══▶ its proxy ─┘
//
// One proxy per side and server, not one per server, so that what a
// proxy holds while the network is down is known to be that side's: a
// request of its that was on its way when the connections were cut is
// tried again by its client (both REST clients retry a GET whose
// connection was reset, a second later on the wall clock), and the try
// waits in the proxy until reconnect. The side then waits for the
// network, as a call the connection holds does (settle).

// wireKey names one side's client of one kube-apiserver.
type wireKey struct {
	user string // the side's user: its implementation, and its informer's label
	api  int    // the index in r.https
}

// serveHTTPS starts kube-apiserver over HTTPS in front of api, with
// Options.Wire; without it, nothing.
func (r *runner) serveHTTPS(api world.APIServer) error {
	if !r.opts.Wire {
		return nil
	}
	srv, err := r.full.ServeHTTPS(r.ctx, api, r.worldClock(), r.userLabels)
	if err != nil {
		return fmt.Errorf("starting kube-apiserver over HTTPS: %w", err)
	}
	r.https = append(r.https, srv)
	return nil
}

// proxyTo starts the side's proxy to kube-apiserver i, cut if the
// network is down now.
func (r *runner) proxyTo(k wireKey) (*tcpproxy.Proxy, error) {
	u, err := url.Parse(r.https[k.api].URL())
	if err != nil {
		return nil, err
	}
	px, err := tcpproxy.Start(u.Host)
	if err != nil {
		return nil, err
	}
	if r.wireCut {
		px.Cut()
	}
	if r.proxies == nil {
		r.proxies = map[wireKey]*tcpproxy.Proxy{}
	}
	r.proxies[k] = px
	return px, nil
}

// heldByCut reports whether one of the side's requests waits in its
// proxy for the network to come back (see above).
func (r *runner) heldByCut(s *side) bool {
	for k, px := range r.proxies {
		if k.user == s.user && px.Held() > 0 {
			return true
		}
	}
	return false
}

// wire is the side's HTTP client of the kube-apiserver its connection
// goes to now (use-apiserver moves it), made at the first call; a side
// authenticates as user, so that the server's log tells the sides apart.
func (r *runner) wire(impl, user string, rec *trace.Recorder) world.Wire {
	k := wireKey{user: user, api: r.using}
	if w, ok := r.wires[k]; ok {
		return w
	}
	w, err := r.newWire(impl, k, rec)
	if err != nil {
		// Certificates, clients and proxies are made in memory and on
		// loopback from what the server made: nothing a scenario can
		// get wrong.
		panic(fmt.Sprintf("sim: an HTTP client of kube-apiserver: %v", err))
	}
	if r.wires == nil {
		r.wires = map[wireKey]world.Wire{}
	}
	r.wires[k] = w
	return w
}

// newWire makes the side's client of a kube-apiserver, through its proxy.
func (r *runner) newWire(impl string, k wireKey, rec *trace.Recorder) (world.Wire, error) {
	px, err := r.proxyTo(k)
	if err != nil {
		return world.Wire{}, err
	}
	newWire := world.CachelabWire
	if impl == trace.ClientGo {
		newWire = world.ClientGoWire
	}
	return newWire(r.https[k.api], r.apis[k.api], k.user, "https://"+px.Addr(), rec)
}

// wireIdle reports whether nothing is on the wire between the servers
// and a side: the kube-apiservers serve as many of the side's watches as
// its connection has open, and their handlers have taken no more events
// than the connection has taken from them. Every kube-apiserver counts,
// not only the one the connection goes to now: use-apiserver moves the
// next requests, and a watch opened before it stays where it is. Always
// true off the wire.
func (r *runner) wireIdle(s *side) bool {
	if !r.opts.Wire {
		return true
	}
	srv, _ := r.onTheWire(s)
	c := s.conn.State()
	return srv.Open == c.Open && srv.Taken == c.Taken
}

// wireArrived reports whether every call a side has in progress has
// reached a server and waits there: the kube-apiservers have as many of
// the side's requests unanswered as the connection has calls. A request
// on its way there, or waiting in the client to be tried again, has not;
// in process a call is in the server from its first instruction. Always
// true off the wire.
func (r *runner) wireArrived(s *side, c world.State) bool {
	if !r.opts.Wire {
		return true
	}
	_, pending := r.onTheWire(s)
	return pending == c.Calls
}

// onTheWire is what every kube-apiserver has of the side's: its watches,
// and its requests not yet answered.
func (r *runner) onTheWire(s *side) (watches wireWatches, pending int) {
	for _, srv := range r.https {
		open, taken := srv.Watches(s.user)
		watches.Open += open
		watches.Taken += taken
		pending += srv.Pending(s.user)
	}
	return watches, pending
}

// wireWatches is a side's watches the kube-apiservers serve, and the
// events their handlers have taken to send.
type wireWatches struct {
	Open  int
	Taken int64
}
