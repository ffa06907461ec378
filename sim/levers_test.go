package sim

import (
	"errors"
	"strings"
	"testing"

	"github.com/cachelab/cachelab/cluster"
	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/lever"
	"github.com/cachelab/cachelab/sim/scenario"
)

// worldOptions are a run's options that make each world of lever.Worlds.
func worldOptions(w lever.World) (Options, bool) {
	var o Options
	switch w.Server {
	case lever.Etcd.Server:
		o.Server = scenario.ServerEtcd
	case lever.WatchCache.Server:
		o.Server = scenario.ServerWatchCache
	case lever.APIServer.Server:
		o.Server, o.Wire = scenario.ServerWatchCache, true
	case lever.Cluster.Server:
		o.Cluster = &cluster.Cluster{} // Check never reaches it
	case lever.Replay.Server:
		o.Replay = &Replay{}
	default:
		return o, false
	}
	if w.External {
		o.Etcd = listwatch.ClientOptions{Endpoints: []string{"http://127.0.0.1:1"}} // never dialed: Check comes first
	}
	return o, true
}

// Every lever in every world, through one mechanism: the run's check
// before its first step refuses a step exactly when the step's lever
// says the world lacks a part it acts on (lever.Available), with the
// lever's reason in the run's words (LeverAllows); explore asks the same
// (checkFaults). A step the world has the lever for may still be refused
// for what the scenario made before it (an etcd member lever on one
// member, a second namespace on a cluster), but never as a lever.
func TestLeversInEveryWorld(t *testing.T) {
	refused := 0
	for _, w := range lever.Worlds {
		opts, ok := worldOptions(w)
		if !ok {
			t.Fatalf("no options make the world %s: say which here", w)
		}
		if got := WorldOf(&scenario.Scenario{}, opts); got != w {
			t.Fatalf("options %+v make the world %s, not %s", opts, got, w)
		}
		for _, name := range lever.Names() {
			sc := &scenario.Scenario{File: "levers.txt", Steps: []scenario.Step{{Cmd: name, Text: name, Line: 3}}}
			err := Check(sc, opts)
			avail := lever.Of(name).Available(w)
			var re *RefusedError
			switch {
			case avail != nil:
				refused++
				want := LeverAllows(name, w)
				if !errors.As(err, &re) || re.Step != 1 || re.Msg != want.Error() {
					t.Errorf("%s in %s: Check says %v; want step 1 refused: %v", name, w, err, want)
				}
				if !strings.Contains(want.Error(), name) {
					t.Errorf("%s in %s: the refusal does not name the lever: %v", name, w, want)
				}
			case errors.As(err, &re) && isLeverRefusal(name, re.Msg):
				t.Errorf("%s in %s: the world has its lever, but Check refused it as one: %v", name, w, err)
			}
		}
	}
	if refused == 0 {
		t.Fatal("no lever was refused in any world")
	}
}

// Every lever finds, in every world that has it available, the part of
// the world its pull acts on: the world's type (newWorld) and the world
// the levers' needs describe (WorldOf) are the same world.
func TestEveryLeverFindsItsPart(t *testing.T) {
	parts := map[part]int{}
	for _, w := range lever.Worlds {
		opts, _ := worldOptions(w)
		sc := &scenario.Scenario{}
		world := (&runner{sc: sc, opts: opts}).newWorld()
		for _, name := range lever.Names() {
			p := runs[name]
			if lever.Of(name).Available(w) != nil {
				continue
			}
			parts[p.part]++
			if !p.in(world) {
				t.Errorf("%s is available in the world %s, but that world's type %T has no %s to pull it on", name, w, world, p.part)
			}
		}
	}
	for _, p := range []part{anyPart, storagePart, cachePart} {
		if parts[p] == 0 {
			t.Errorf("no lever available anywhere acts on %s", p)
		}
	}
}

// isLeverRefusal reports whether msg is how some world refuses cmd's
// lever.
func isLeverRefusal(cmd, msg string) bool {
	for _, w := range lever.Worlds {
		if err := LeverAllows(cmd, w); err != nil && err.Error() == msg {
			return true
		}
	}
	return false
}

// Every resource, and finalizers and owners, in every world, through the
// same mechanism as the commands' levers (StepAllows): a step that names
// a resource (each command that can) or gives finalizers= or owner= is
// refused before the first step exactly where the resource's lever
// (lever.Resource), lever.Finalizers or lever.Owner says the world lacks a part, with
// that lever's reason in the run's words (ResourceAllows,
// ValueAllows), and allowed everywhere the world has it. Each
// scenario's first refused step is the first whose levers the world
// lacks.
func TestResourcesInEveryWorld(t *testing.T) {
	var cases []string
	for _, res := range scenario.Resources {
		cases = append(cases,
			"create "+res+" ns0/b",
			"create "+res+" ns0/a\n----\n\nupdate "+res+" ns0/a labels=()",
			"create "+res+" ns0/a\n----\n\ndelete "+res+" ns0/a",
			"factory f\n----\n\ninformer f "+res,
			"start informer="+res)
	}
	cases = append(cases, "create configmaps ns0/o\n----\n\ncreate ns0/p finalizers=(example.com/x)",
		"create ns0/o\n----\n\ncreate ns0/p owner=pods/ns0/o")
	refused, byResource, allowed := 0, 0, 0
	for _, w := range lever.Worlds {
		opts, _ := worldOptions(w)
		for _, c := range cases {
			src := "# Server: etcd\n\n" + strings.ReplaceAll(c, `\n`, "\n") + "\n----\n"
			sc, err := scenario.Parse("resources.txt", []byte(src))
			if err != nil {
				t.Fatalf("%q does not parse: %v", src, err)
			}
			// The first step the world lacks a lever of, by the levers'
			// own answers.
			want, wantStep := error(nil), 0
			for i, st := range sc.Steps {
				a, _ := scenario.ParseArgs(st)
				if lever.Of(st.Cmd).Available(w) != nil {
					want, wantStep = LeverAllows(st.Cmd, w), i+1
				} else if lever.Resource(a.Resource).Available(w) != nil {
					want, wantStep = ResourceAllows(st.Cmd, a.Resource, w), i+1
					byResource++
				} else if a.Values["finalizers"] != nil && lever.Finalizers.Available(w) != nil {
					want, wantStep = ValueAllows(st.Cmd, lever.Finalizers, w), i+1
					byResource++
				} else if a.Values["owner"] != nil && lever.Owner.Available(w) != nil {
					want, wantStep = ValueAllows(st.Cmd, lever.Owner, w), i+1
					byResource++
				}
				if want != nil {
					break
				}
			}
			err = Check(sc, opts)
			var re *RefusedError
			switch {
			case want != nil:
				refused++
				if !errors.As(err, &re) || re.Step != wantStep || re.Msg != want.Error() {
					t.Errorf("%q in %s: Check says %v; want step %d refused: %v", c, w, err, wantStep, want)
				}
			case errors.As(err, &re) && (strings.Contains(re.Msg, "writes and watches") || strings.Contains(re.Msg, "finalizers") || strings.Contains(re.Msg, "owner")):
				t.Errorf("%q in %s: the world has the step's levers, but Check refused it as lacking one: %v", c, w, err)
			default:
				allowed++
			}
		}
	}
	if byResource == 0 || allowed == 0 {
		t.Fatalf("%d steps refused (%d for their resource or lifecycle) and %d allowed: the test tells nothing", refused, byResource, allowed)
	}
}

// The resources a scenario may name are the ones the worlds serve:
// scenario.Resources, spelled again for the parser, is
// listwatch.BuiltIn's names, pods first.
func TestResourcesAreBuiltIn(t *testing.T) {
	var served []string
	for _, r := range listwatch.BuiltIn {
		served = append(served, r.Name())
	}
	if strings.Join(served, " ") != strings.Join(scenario.Resources, " ") {
		t.Fatalf("scenario.Resources are %v; the worlds serve %v", scenario.Resources, served)
	}
	if scenario.Resources[0] != scenario.DefaultResource {
		t.Fatalf("the first resource is %s, not the default, %s", scenario.Resources[0], scenario.DefaultResource)
	}
}

// A run names a key prefix of its own only on an external etcd: the
// hint a second signal prints (etcdctl del --prefix ...) must never name
// every key of a cluster's etcd, as "/registry/" would.
func TestKeyPrefixOnlyOnAnExternalEtcd(t *testing.T) {
	r := &runner{}
	ext := &etcdWorld{r: r, prefix: "cachelab-sim-1-"}
	for _, c := range []struct {
		where runWorld
		want  string
	}{
		{&clusterWorld{r: r}, ""},
		{&replayWorld{r: r}, ""},
		{&etcdWorld{r: r, etcd: &listwatch.Embedded{}}, ""},
		{ext, "/registry/cachelab-sim-1-"},
		{&cacheWorld{etcdWorld: ext}, "/registry/cachelab-sim-1-"},
	} {
		r.where = c.where
		if got := (&Session{r: r}).KeyPrefix(); got != c.want {
			t.Errorf("%T: KeyPrefix %q, want %q", c.where, got, c.want)
		}
	}
}
