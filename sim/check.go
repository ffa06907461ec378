package sim

import (
	"errors"
	"fmt"

	"github.com/cachelab/cachelab/sim/lever"
	"github.com/cachelab/cachelab/sim/scenario"
)

// What a run's options cannot carry out. scenario.Parse checks a file on
// its own, for the world its "# Server:" line names and the etcd its
// etcd-cluster asks for. A run may be given others (--server, --etcd-members,
// --etcd-endpoints, --kubeconfig, a replay), and some steps cannot run
// there: a watch-cache lever without the watch cache, a lever that stops
// or copies etcd on an etcd the run does not own, a member lever on one
// member, a write in a replay. Found at its step, such a step ends the
// run halfway, after seconds or minutes and after earlier writes; Check
// finds it before anything starts, and Open calls it first.

// RefusedError is a step the run's options cannot carry out, found
// before the run starts: Step is its number (1-based) in the scenario,
// File:Line where it is, Msg why.
type RefusedError struct {
	File string
	Line int
	Step int
	Msg  string
}

func (e *RefusedError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Check says why sc cannot run with opts, or nil: a *RefusedError for
// the first step that the run's world cannot carry out, a *NotLinkedError
// if the run needs what this build leaves out (NeedsFull), or an error
// for options that do not go together. Whether a step's lever can be
// pulled in the run's world is the lever's own answer (package
// sim/lever); the world is its options' (WorldOf). A step may also be
// refused for what the steps before it made: an advance too long for
// the watch cache, a member lever on members that are not there, on a
// cluster a second namespace or a controller's decided writes.
func Check(sc *scenario.Scenario, opts Options) error {
	if err := checkLinked(sc, opts); err != nil {
		return err
	}
	if err := checkOptions(sc, opts); err != nil {
		return err
	}
	w := WorldOf(sc, opts)
	if w.Server == lever.Cluster.Server {
		return CheckCluster(sc)
	}
	var members *scenario.MembersCheck
	if w.Server != lever.Replay.Server && !w.External {
		members = scenario.NewMembersCheck(sc, opts.EtcdMembers)
	}
	for i, st := range sc.Steps {
		a, _ := scenario.ParseArgs(st) // Parse checked them
		err := StepAllows(st.Cmd, a, w)
		if err == nil && w.Server != lever.Replay.Server {
			err = scenario.InformedAdvance(st.Text, st.Moves, st.Informed, serverName(w))
		}
		if err == nil && members != nil {
			err = members.Step(st, a)
		}
		if err != nil {
			return &RefusedError{File: sc.File, Line: st.Line, Step: i + 1, Msg: err.Error()}
		}
	}
	return nil
}

// checkOptions says why the run's options do not go together, or do
// not go with sc, or nil.
func checkOptions(sc *scenario.Scenario, opts Options) error {
	switch {
	case opts.Replay != nil:
		if opts.Wire || opts.Server != "" || len(opts.Etcd.Endpoints) > 0 || opts.EtcdMembers > 0 || opts.Cluster != nil {
			return fmt.Errorf("a replay's server is the recording: --server, --etcd-endpoints, --etcd-members and --kubeconfig do not go with it")
		}
		return nil
	case opts.Cluster != nil:
		if opts.Wire || opts.Server != "" || len(opts.Etcd.Endpoints) > 0 || opts.EtcdMembers > 0 {
			return fmt.Errorf("a run on a cluster (--kubeconfig) has no etcd or kube-apiserver of its own: " +
				"--server, --etcd-endpoints and --etcd-members do not go with it")
		}
	case opts.Wire && serverName(WorldOf(sc, opts)) != scenario.ServerWatchCache:
		// Over the wire only the etcd world is left: WorldOf gave etcd.
		return fmt.Errorf("over the wire (--server apiserver) the informers reach kube-apiserver's watch cache over HTTPS; this run's world is %s",
			describeServer(scenario.ServerEtcd, false))
	case len(opts.Etcd.Endpoints) > 0 && opts.EtcdMembers > 1:
		return fmt.Errorf("an etcd cluster of %d members needs the embedded etcd; this run uses an external one", opts.EtcdMembers)
	}
	if opts.Plant != "" {
		if _, err := LookupPlant(opts.Plant); err != nil {
			return err
		}
	}
	return nil
}

// WorldOf is the world sc runs in with opts, as the levers know it: the
// first of worldKinds (newworld.go) that opts choose.
func WorldOf(sc *scenario.Scenario, opts Options) lever.World {
	w, _ := kindOf(sc, opts)
	return w
}

// serverName is w's server as a scenario's "# Server:" line names it.
func serverName(w lever.World) string {
	if w.Server == lever.APIServer.Server {
		return scenario.ServerWatchCache
	}
	return w.Server
}

// StepAllows says why a step of cmd with arguments a cannot run in w, or
// nil: the answer of each lever it pulls, its command's (LeverAllows),
// the resource it names (ResourceAllows), and finalizers= and owner=
// (ValueAllows). Check, CheckCluster and the runner's guard at the step
// all ask it.
func StepAllows(cmd string, a scenario.Args, w lever.World) error {
	if err := LeverAllows(cmd, w); err != nil {
		return err
	}
	if err := ResourceAllows(cmd, a.Resource, w); err != nil {
		return err
	}
	for _, v := range valueLevers {
		if a.Values[v.key] != nil {
			if err := ValueAllows(cmd, v.lever, w); err != nil {
				return err
			}
		}
	}
	return nil
}

// valueLevers are the levers a step pulls by giving a value: each key's.
var valueLevers = []struct {
	key   string
	lever lever.Lever
}{{"finalizers", lever.Finalizers}, {"owner", lever.Owner}}

// ResourceAllows says why a step of cmd that names resource cannot run
// in w, or nil: its resource's lever's answer (lever.Resource), in the
// words of a run.
func ResourceAllows(cmd, resource string, w lever.World) error {
	l := lever.Resource(resource)
	err := l.Available(w)
	if err == nil {
		return nil
	}
	switch {
	case w.Server == lever.Cluster.Server:
		return fmt.Errorf("%s %s cannot run on a cluster (--kubeconfig): %s", cmd, resource, l.OnCluster)
	case w.Server == lever.Replay.Server:
		return fmt.Errorf("%s %s cannot run in a replay: a recording holds the built-in resource it recorded", cmd, resource)
	}
	return err
}

// ValueAllows says why a write of cmd that gives the value l stands for
// (lever.Finalizers, lever.Owner) cannot run in w, or nil: l's answer.
func ValueAllows(cmd string, l lever.Lever, w lever.World) error {
	err := l.Available(w)
	if err == nil {
		return nil
	}
	switch {
	case w.Server == lever.Cluster.Server:
		return fmt.Errorf("%s %s cannot run on a cluster (--kubeconfig): %s", cmd, l.Name, l.OnCluster)
	case w.Server == lever.Replay.Server:
		return fmt.Errorf("%s cannot run in a replay: its server is a recording, which no step can change", cmd)
	}
	return err
}

// LeverAllows says why cmd's lever cannot be pulled in w, or nil, in the
// words of a run: which flag would give it the part it lacks.
//
// One lever could run on an external etcd and must not unasked: compact.
// etcd's compaction is global, not per key prefix: it discards every
// key's history before the revision, another application's too, though
// the run otherwise keeps to its own prefix. It runs there only when the
// user says so (Options.CompactExternalEtcd,
// --allow-compacting-external-etcd).
func LeverAllows(cmd string, w lever.World) error {
	l, ok := lever.Lookup(cmd)
	if !ok {
		return fmt.Errorf("%s is not a command of the scenario language", cmd)
	}
	err := l.Available(w)
	var r *lever.Refused
	if !errors.As(err, &r) {
		return err
	}
	wire := w.Server == lever.APIServer.Server
	switch {
	case w.Server == lever.Cluster.Server:
		return fmt.Errorf("%s cannot run on a cluster (--kubeconfig): %s", cmd, l.OnCluster)
	case w.Server == lever.Replay.Server:
		return fmt.Errorf("%s cannot run in a replay: its server is a recording, which no step can change", cmd)
	case r.Missing == lever.OwnWatchCache:
		return fmt.Errorf("%s needs kube-apiserver's watch cache; this run's server is %s: run it with --server %s or --server apiserver",
			cmd, describeServer(serverName(w), wire), scenario.ServerWatchCache)
	case r.Missing == lever.NoWatchCache:
		return fmt.Errorf("%s is a lever of the etcd world (kube-apiserver with its watch cache off); this run's server is %s: run it with --server %s",
			cmd, describeServer(serverName(w), wire), scenario.ServerEtcd)
	case r.Missing == lever.OwnEtcd:
		return fmt.Errorf("%s needs the embedded etcd (%s); this run uses an external one (--etcd-endpoints)", cmd, l.Does)
	case r.Missing == lever.EtcdHistory:
		return fmt.Errorf("%s compacts the whole etcd, not only this run's keys: on an external etcd (--etcd-endpoints) "+
			"every application's history before that revision would be gone; --allow-compacting-external-etcd lets it", cmd)
	}
	return err
}
