package sim

import (
	"fmt"
	"net/url"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/cachelab/cachelab/listwatch"
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

// httpsWorld is kube-apiserver over HTTPS (--server apiserver): the
// watch-cache world (cacheWorld) with an HTTPS front on each of its
// kube-apiservers, and each side's proxy and HTTP client of each.
type httpsWorld struct {
	*cacheWorld
	wiring
}

func newHTTPSWorld(r *runner) *httpsWorld {
	w := &httpsWorld{cacheWorld: newCacheWorld(r)}
	w.served = w.serveHTTPS
	return w
}

// wiring is what httpsWorld adds: the HTTPS fronts, in the order of the
// cache world's kube-apiservers, and the sides' proxies and clients.
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

// serveHTTPS starts kube-apiserver over HTTPS in front of api.
func (w *httpsWorld) serveHTTPS(api *kubeAPIServer) error {
	r := w.r
	labels := r.userLabels
	if late := r.opts.lateRequests; late > 0 {
		labels = func(user string) pprof.LabelSet {
			if strings.HasPrefix(user, trace.ClientGo) {
				time.Sleep(late) // Options.lateRequests
			}
			return r.userLabels(user)
		}
	}
	srv, err := r.full.ServeHTTPS(r.ctx, api.members(), r.worldClock(), labels)
	if err != nil {
		return fmt.Errorf("starting kube-apiserver over HTTPS: %w", err)
	}
	w.https = append(w.https, srv)
	return nil
}

// server is the side's HTTP client of the kube-apiserver its connection
// goes to when it makes a request.
func (w *httpsWorld) server(label string, res *listwatch.Resource, i int, impl, user string, rec *trace.Recorder) (func(ns string) world.Server, int, error) {
	name := w.named(res)
	return func(ns string) world.Server { return w.wire(impl, user, name, rec).Server(ns) }, i + 1, nil
}

// reached: as from the watch cache, and nothing is on the wire.
func (w *httpsWorld) reached(s *side, rev int64) bool {
	return w.cacheWorld.reached(s, rev) && w.idle(s)
}

// cutters are the sides' proxies, and the wiring itself, so that a proxy
// made while the network is down starts cut.
func (w *httpsWorld) cutters() ([]cutter, string) {
	cs := []cutter{&w.wiring}
	for _, px := range w.proxies {
		cs = append(cs, px)
	}
	return cs, "kube-apiserver"
}

func (w *httpsWorld) close() {
	w.wiring.close()
	w.cacheWorld.close()
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

// Cut and Restore note whether the network is down (disconnect, then
// reconnect): a proxy started meanwhile starts cut. The wiring is one of
// the world's cutters; it cuts no connection itself.
func (w *wiring) Cut() int { w.cut = true; return 0 }
func (w *wiring) Restore() { w.cut = false }

// heldByCut reports whether one of the side's requests waits in its
// proxy for the network to come back (see above).
func (w *wiring) heldByCut(s *side) bool {
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
func (w *httpsWorld) wire(impl, user, resource string, rec *trace.Recorder) world.Wire {
	k := wireKey{user: user, api: w.using, resource: resource}
	if c, ok := w.clients[k]; ok {
		return c
	}
	c, err := w.newClient(impl, k, w.apis[k.api].of(resource), rec)
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

// idle reports whether nothing is on the wire between the servers
// and a side: the kube-apiservers serve as many of the side's watches as
// its connection has open, and their handlers have taken no more events
// than the connection has taken from them. Every kube-apiserver counts,
// not only the one the connection goes to now: use-apiserver moves the
// next requests, and a watch opened before it stays where it is.
func (w *wiring) idle(s *side) bool {
	srv, _ := w.onTheWire(s)
	c := s.conn.State()
	return srv.Open == c.Open && srv.Taken == c.Taken
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
