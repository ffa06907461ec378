package sim

import (
	"fmt"
	"runtime/debug"
	"strings"

	clientfeatures "k8s.io/client-go/features"

	"github.com/cachelab/cachelab/informer"
	"github.com/cachelab/cachelab/sim/scenario"
	"github.com/cachelab/cachelab/sim/trace"
)

// Version is cachelab's version, printed in every trace header and by
// `cachelab version`. It is a variable, not a constant, so that a release
// build stamps its tag into it (.goreleaser.yaml: -ldflags -X
// github.com/cachelab/cachelab/sim.Version=...; the linker can set only a
// string variable); a build from source says the version below.
var Version = "0.5.0"

// clientGoVersion is the client-go the binary was built with.
func clientGoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "k8s.io/client-go" {
				return d.Version
			}
		}
	}
	return "v0.37.2"
}

func newHeader(sc *scenario.Scenario, st informer.Stack, server string, opts Options) trace.Header {
	h := trace.Header{Scenario: sc.Name, Title: sc.Title, IDs: sc.IDs, Cachelab: Version, ClientGo: clientGoVersion(),
		Stack: st, Seed: opts.Seed, Server: server, Etcd: "embedded", Plant: opts.Plant}
	if len(opts.Etcd.Endpoints) > 0 {
		h.Etcd = strings.Join(opts.Etcd.Endpoints, ",")
	}
	if opts.Wire {
		h.Server = "apiserver" // the watch cache, over HTTPS
	}
	h.FeatureGates = gatesFor(st)
	return h
}

// The client-go feature gates a stack sets. client-go's gates are global,
// so a process runs one stack at a time.
var stackGates = []clientfeatures.Feature{
	clientfeatures.InOrderInformers,
	clientfeatures.InOrderInformersBatchProcess,
	clientfeatures.UnlockWhileProcessingFIFO,
	clientfeatures.WatchListClient,
}

func gatesFor(st informer.Stack) map[string]bool {
	out := map[string]bool{}
	for _, f := range stackGates {
		out[string(f)] = clientfeatures.FeatureGates().Enabled(f)
	}
	if st == informer.Classic {
		out[string(clientfeatures.InOrderInformers)] = false
		out[string(clientfeatures.WatchListClient)] = false
	}
	return out
}

// setFeatureGates sets client-go's gates for st: the classic stack is
// InOrderInformers and WatchListClient off (both are on by default).
func setFeatureGates(st informer.Stack) error {
	type setter interface {
		SetForTesting(clientfeatures.Feature, bool) error
	}
	g, ok := clientfeatures.FeatureGates().(setter)
	if !ok {
		return fmt.Errorf("sim: client-go's feature gates (%T) cannot be set", clientfeatures.FeatureGates())
	}
	on := st != informer.Classic
	for _, f := range []clientfeatures.Feature{clientfeatures.InOrderInformers, clientfeatures.WatchListClient} {
		if err := g.SetForTesting(f, on); err != nil {
			return err
		}
	}
	return nil
}
