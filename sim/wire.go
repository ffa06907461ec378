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

// wiring is the run's part over the wire: kube-apiserver over HTTPS in
// front of each of the run's storages (the run's apis, in order), and
// each side's proxy and HTTP client of each. A run not over the wire has
// none (runner.wiring is nil).
type wiring struct {
	https   []world.HTTPSServer
	proxies map[wireKey]*tcpproxy.Proxy // which disconnect cuts
	cut     bool                        // disconnect cut the proxies, and reconnect has not restored them
	clients map[wireKey]world.Wire
}

// wireKey names one side's client of one kube-apiserver.
type wireKey struct {
	user     string // the side's user: its implementation, and its informer's label
	api      int    // the index in wiring.https
	resource string // what it lists and watches, as a scenario names it
}

// serveHTTPS starts kube-apiserver over HTTPS in front of api, with
// Options.Wire; without it, nothing.
func (r *runner) serveHTTPS(api *kubeAPIServer) error {
	if !r.opts.Wire {
		return nil
	}
	srv, err := r.full.ServeHTTPS(r.ctx, api.members(), r.worldClock(), r.userLabels)
	if err != nil {
		return fmt.Errorf("starting kube-apiserver over HTTPS: %w", err)
	}
	if r.wiring == nil {
		r.wiring = &wiring{}
	}
	r.wiring.https = append(r.wiring.https, srv)
	return nil
}

// proxyTo starts the side's proxy to kube-apiserver k.api, cut if the
// network is down now.
func (w *wiring) proxyTo(k wireKey) (*tcpproxy.Proxy, error) {
	u, err := url.Parse(w.https[k.api].URL())
	if err != nil {
		return nil, err
	}
	px, err := tcpproxy.Start(u.Host)
	if err != nil {
		return nil, err
	}
	if w.cut {
		px.Cut()
	}
	if w.proxies == nil {
		w.proxies = map[wireKey]*tcpproxy.Proxy{}
	}
	w.proxies[k] = px
	return px, nil
}

// setCut notes whether the network is down: a proxy started meanwhile
// starts cut. Off the wire, nothing.
func (w *wiring) setCut(cut bool) {
	if w != nil {
		w.cut = cut
	}
}

// heldByCut reports whether one of the side's requests waits in its
// proxy for the network to come back (see above). Off the wire, false.
func (w *wiring) heldByCut(s *side) bool {
	if w == nil {
		return false
	}
	for k, px := range w.proxies {
		if k.user == s.user && px.Held() > 0 {
			return true
		}
	}
	return false
}

// wire is the side's HTTP client of the kube-apiserver its connection
// goes to now (use-apiserver moves it), made at the first call; a side
// authenticates as user, so that the server's log tells the sides apart.
func (r *runner) wire(impl, user, resource string, rec *trace.Recorder) world.Wire {
	w := r.wiring
	k := wireKey{user: user, api: r.using, resource: resource}
	if c, ok := w.clients[k]; ok {
		return c
	}
	c, err := w.newClient(impl, k, r.apis[k.api].of(resource), rec)
	if err != nil {
		// Certificates, clients and proxies are made in memory and on
		// loopback from what the server made: nothing a scenario can
		// get wrong.
		panic(fmt.Sprintf("sim: an HTTP client of kube-apiserver: %v", err))
	}
	if w.clients == nil {
		w.clients = map[wireKey]world.Wire{}
	}
	w.clients[k] = c
	return c
}

// newClient makes the side's client of kube-apiserver k.api (whose
// storage is api), through its proxy.
func (w *wiring) newClient(impl string, k wireKey, api world.APIServer, rec *trace.Recorder) (world.Wire, error) {
	px, err := w.proxyTo(k)
	if err != nil {
		return world.Wire{}, err
	}
	newWire := world.CachelabWire
	if impl == trace.ClientGo {
		newWire = world.ClientGoWire
	}
	return newWire(w.https[k.api], api, k.user, "https://"+px.Addr(), rec)
}

// close closes the clients, the proxies and the HTTPS servers, in that
// order. Off the wire, nothing.
func (w *wiring) close() {
	if w == nil {
		return
	}
	for _, c := range w.clients {
		c.Close()
	}
	for _, px := range w.proxies {
		_ = px.Close()
	}
	for _, h := range w.https {
		h.Close()
	}
}

// wireIdle reports whether nothing is on the wire between the servers
// and a side: the kube-apiservers serve as many of the side's watches as
// its connection has open, and their handlers have taken no more events
// than the connection has taken from them. Every kube-apiserver counts,
// not only the one the connection goes to now: use-apiserver moves the
// next requests, and a watch opened before it stays where it is. Always
// true off the wire.
func (r *runner) wireIdle(s *side) bool {
	if r.wiring == nil {
		return true
	}
	srv, _ := r.wiring.onTheWire(s)
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
	if r.wiring == nil {
		return true
	}
	_, pending := r.wiring.onTheWire(s)
	return pending == c.Calls
}

// onTheWire is what every kube-apiserver has of the side's: its watches,
// and its requests not yet answered.
func (w *wiring) onTheWire(s *side) (watches wireWatches, pending int) {
	for _, srv := range w.https {
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
