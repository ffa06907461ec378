package sim

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/cachelab/cachelab/sim/lever"
	"github.com/cachelab/cachelab/sim/scenario"
)

// What a run on a cluster refuses before its first step, beyond the
// levers a cluster lacks: the world itself is clusterWorld (cluster.go).

// ServerCluster is the world of a run on a cluster.
const ServerCluster = "cluster"

// CheckCluster says why sc cannot run on a cluster, or nil: a
// *RefusedError for the first step that acts on a server's insides, or
// that names a second namespace. Check calls it for a run with
// Options.Cluster; a caller may call it before it reaches the cluster.
func CheckCluster(sc *scenario.Scenario) error {
	for i, st := range sc.Steps {
		a, _ := scenario.ParseArgs(st)
		err := StepAllows(st.Cmd, a, lever.Cluster)
		if err == nil {
			err = checkCluster(st, a)
		}
		if err != nil {
			return &RefusedError{File: sc.File, Line: st.Line, Step: i + 1, Msg: err.Error()}
		}
	}
	return checkClusterNamespaces(sc)
}

// checkCluster says why the step, whose lever a cluster has, cannot run
// on a cluster as the step is written, or nil.
func checkCluster(st scenario.Step, a scenario.Args) error {
	if st.Cmd == "start-controller" && a.Flags["writes"] {
		return fmt.Errorf("start-controller writes cannot run on a cluster (--kubeconfig): the simulator decides a controller's " +
			"writes before it makes them, their resourceVersions included, so that both implementations' reconciles read the same; " +
			"a cluster's other components move its revision in between")
	}
	if f, ok := a.Value("fields"); ok && strings.Contains(f, "metadata.namespace") {
		return fmt.Errorf("%s: a field selector on metadata.namespace cannot run on a cluster (--kubeconfig): "+
			"the scenario's namespaces are the run's one namespace there", st.Cmd)
	}
	return nil
}

// keyNamespace is the namespace of a key in a step's arguments.
var keyNamespace = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?)/[^/=]+$`)

// namespacesOf is every namespace sc names, with the step that first
// names each: in its objects' keys, and in namespace= and ns= (bulk-create's,
// scenario.BulkNamespace if not given).
func namespacesOf(sc *scenario.Scenario) (names []string, first map[string]int) {
	first = map[string]int{}
	add := func(ns string, i int) {
		if _, ok := first[ns]; !ok && ns != "" {
			first[ns] = i
			names = append(names, ns)
		}
	}
	for i, st := range sc.Steps {
		a, _ := scenario.ParseArgs(st)
		for _, p := range a.Pos {
			if m := keyNamespace.FindStringSubmatch(p); m != nil {
				add(m[1], i)
			}
		}
		if v, ok := a.Value("namespace"); ok {
			add(v, i)
		}
		if st.Cmd == "bulk-create" {
			add(a.BulkNS(), i)
		}
	}
	return names, first
}

// checkClusterNamespaces refuses a scenario that names more than one
// namespace: on a cluster they would all be the run's one.
func checkClusterNamespaces(sc *scenario.Scenario) error {
	names, first := namespacesOf(sc)
	if len(names) < 2 {
		return nil
	}
	i := first[names[1]]
	st := sc.Steps[i]
	return &RefusedError{File: sc.File, Line: st.Line, Step: i + 1,
		Msg: fmt.Sprintf("%s names namespace %s after %s: on a cluster (--kubeconfig) a run has one namespace of its own, "+
			"so a scenario there may name only one", st.Cmd, names[1], names[0])}
}
