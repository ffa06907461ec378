package trace

import (
	"fmt"
	"time"

	"github.com/cachelab/cachelab/informer"
)

// The two implementations a scenario runs side by side, and the world
// they share.
const (
	Cachelab = "cachelab"
	ClientGo = "client-go"
	World    = "world"
)

// Header names everything a trace depends on.
type Header struct {
	Scenario     string          `json:"scenario"`
	Title        string          `json:"title"`
	IDs          []string        `json:"ids"`
	Cachelab     string          `json:"cachelab"`
	ClientGo     string          `json:"clientGo"`
	Stack        informer.Stack  `json:"stack"`
	FeatureGates map[string]bool `json:"featureGates"`
	Seed         uint64          `json:"seed"`
	// Server is the kube-apiserver the informers talk to: "etcd" (its
	// watch cache off), "watchcache", "apiserver" (over HTTPS, in
	// process), "cluster" or "replay".
	Server string `json:"server"`
	Etcd   string `json:"etcd"`
	// Cluster, on a cluster (--kubeconfig), says which, and the
	// namespace the run made there.
	Cluster string `json:"cluster,omitempty"`
	// Replay, in a replay (cachelab replay), says what session, recorded
	// where and when.
	Replay string `json:"replay,omitempty"`
	// Plant names a known bug put into cachelab's side (sim.Plants), if
	// any: then this trace is not cachelab's own.
	Plant string `json:"plant,omitempty"`
	// Env is the environment both sides' informers ran with, where it
	// changes what they do: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true
	// when the data consistency detector was on; nil otherwise.
	Env map[string]string `json:"env,omitempty"`
}

// StepResult is what one step showed, per implementation, and whether
// they agreed.
type StepResult struct {
	Index int    `json:"step"`
	Pos   string `json:"pos"`
	Cmd   string `json:"cmd"`
	// World is what the step did to etcd and the connection.
	World []Event `json:"world,omitempty"`
	// Sides holds each implementation's events (Cachelab, ClientGo), in
	// layer order, each layer in the order it happened on that side.
	Sides map[string][]Event `json:"sides"`
	// Divergence is the first difference between them, if any.
	Divergence *Divergence `json:"divergence,omitempty"`
	// Took, on a cluster, is how long the step took in wall time, from
	// its command to both sides settled: a cluster's own time, which
	// differs from run to run (0, and left out, elsewhere).
	Took time.Duration `json:"-"`
}

// Divergence is where client-go and cachelab first differed.
type Divergence struct {
	Step  int    `json:"step"`
	Pos   string `json:"pos"`
	Cmd   string `json:"cmd"`
	Layer string `json:"layer"`
	// Diff is the layer's lines, -cachelab +client-go.
	Diff string `json:"diff"`
}

func (d *Divergence) Error() string {
	return fmt.Sprintf("%s: step %d (%s): cachelab and client-go differ in layer %q (-cachelab +client-go):\n%s", d.Pos, d.Step, d.Cmd, d.Layer, d.Diff)
}
