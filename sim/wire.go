package sim

import (
	"fmt"
	"net/url"

	"github.com/cachelab/cachelab/apistorage"
	"github.com/cachelab/cachelab/kubeapiserver"
	"github.com/cachelab/cachelab/sim/trace"
	"github.com/cachelab/cachelab/sim/world"
	"github.com/cachelab/cachelab/tcpproxy"
)

// Over the wire (Options.Wire), every kube-apiserver's storage gets an
// HTTPS front, with a proxy on loopback in front of it (package
// tcpproxy, where a disconnect cuts the connections), and each side an
// HTTP client of each front, through its proxy, made the first time its
// connection goes there (sim/world/wire.go).

// wireKey names one side's client of one kube-apiserver.
type wireKey struct {
	user string // the side's user: its implementation, and its informer's label
	api  int    // the index in r.https
}

// serveHTTPS starts kube-apiserver over HTTPS in front of api, with
// Options.Wire; without it, nothing.
func (r *runner) serveHTTPS(api *apistorage.Server) error {
	if !r.opts.Wire {
		return nil
	}
	srv, err := kubeapiserver.New(r.ctx, api, kubeapiserver.Options{Clock: r.worldClock(), Labels: r.userLabels})
	if err != nil {
		return fmt.Errorf("starting kube-apiserver over HTTPS: %w", err)
	}
	r.https = append(r.https, srv)
	u, err := url.Parse(srv.URL())
	if err != nil {
		return err
	}
	px, err := tcpproxy.Start(u.Host)
	if err != nil {
		return err
	}
	r.proxies = append(r.proxies, px)
	return nil
}

// wire is the side's HTTP client of the kube-apiserver its connection
// goes to now (use-apiserver moves it), made at the first call; a side
// authenticates as user, so that the server's log tells the sides apart.
func (r *runner) wire(impl, user string, rec *trace.Recorder) world.Wire {
	k := wireKey{user: user, api: r.using}
	if w, ok := r.wires[k]; ok {
		return w
	}
	newWire := world.CachelabWire
	if impl == trace.ClientGo {
		newWire = world.ClientGoWire
	}
	w, err := newWire(r.https[r.using], r.apis[r.using], user, "https://"+r.proxies[r.using].Addr(), rec)
	if err != nil {
		// Certificates and clients are made in memory from what the
		// server made: nothing a scenario can get wrong.
		panic(fmt.Sprintf("sim: an HTTP client of kube-apiserver: %v", err))
	}
	if r.wires == nil {
		r.wires = map[wireKey]world.Wire{}
	}
	r.wires[k] = w
	return w
}

// wireIdle reports whether nothing is on the wire between the server
// and a side: the server serves as many of the side's watches as its
// connection has open, and their handlers have taken no more events than
// the connection has taken from them. Always true off the wire.
func (r *runner) wireIdle(s *side) bool {
	ws, ok := s.conn.Base().(*world.WireServer)
	if !ok {
		return true
	}
	srv, c := ws.Wire(), s.conn.State()
	return srv.Open == c.Open && srv.Taken == c.Taken
}

// wireArrived reports whether every call a side has in progress has
// reached the server and waits there: the server has as many of the
// side's requests unanswered as the connection has calls. A request on
// its way there, or waiting in the client to be tried again, has not;
// in process a call is in the server from its first instruction. Always
// true off the wire.
func (r *runner) wireArrived(s *side, c world.State) bool {
	ws, ok := s.conn.Base().(*world.WireServer)
	if !ok {
		return true
	}
	return ws.Pending() == c.Calls
}
