package controllertest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/cachelab/cachelab/listwatch"
	"github.com/cachelab/cachelab/sim/objects"
	"github.com/cachelab/cachelab/sim/scenario"
)

// A Story is what happens around the controller: a scenario file's
// writes, moves of the clock and faults, in cachelab's scenario language
// (docs/scenarios.md), played by the world one step at a time, each
// step settled before the next:
//
//	crd                                  (a CustomResourceDefinition, served from the start)
//	create foos ns0/f spec=(replicas=2)  (through the server, as StoryUser)
//	update configmaps ns0/f-config data=(k=v)
//	delete foos ns0/f
//	advance 30s                          (the world's clock, timer by timer)
//	disconnect / reconnect               (the controller's connections, memnet)
//	close-watch                          (the server ends the controller's watches)
//	compact                              (etcd compacts at its revision)
//	restart-apiserver                    (the watch caches start anew)
//	stop / start                         (the controller stops, and starts anew)
//	hold-cache / release-cache           (the watch caches stop taking in etcd's events)
//	gc                                   (a sweep of the garbage collector, gc.go)
//
// The story's own commands say nothing of an informer: the controller
// has its own. The rest of the language is the simulator's own
// informers' and is refused, at its line.
type Story struct {
	sc *scenario.Scenario
}

// played are the commands a world plays.
var played = []string{"crd", "create", "update", "delete", "advance", "settle", "disconnect", "reconnect",
	"close-watch", "compact", "restart-apiserver", "stop", "start", "hold-cache", "release-cache", "gc"}

// writes are the story's commands that write an object of a resource.
var writes = []string{"create", "update", "delete"}

// ParseStory reads a story (file names it in errors).
func ParseStory(file string, src []byte) (*Story, error) {
	sc, err := scenario.Parse(file, src)
	if err != nil {
		return nil, err
	}
	for _, st := range sc.Steps {
		if !slices.Contains(played, st.Cmd) {
			return nil, fmt.Errorf("%s:%d: a controller's world does not play %q; it plays %s", file, st.Line, st.Cmd, strings.Join(played, ", "))
		}
		a, err := scenario.ParseArgs(st)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, st.Line, err)
		}
		if st.Cmd == "start" && (len(a.Values) > 0 || len(a.Pos) > 0) {
			return nil, fmt.Errorf("%s:%d: start takes nothing in a controller's world: it starts anew the controller a stop stopped", file, st.Line)
		}
		_, after := a.Values["after-events"]
		_, page := a.Values["after-pages"]
		if after || page {
			return nil, fmt.Errorf("%s:%d: a fault inside a step (after-events=, after-pages=) is the simulator's; a controller's world places faults between steps", file, st.Line)
		}
	}
	return &Story{sc: sc.WithoutExpectations()}, nil
}

// Name is the story's file name.
func (s *Story) Name() string { return s.sc.Name }

// Line is the line of the story's first step that runs cmd, or 0.
func (s *Story) Line(cmd string) int {
	for _, st := range s.sc.Steps {
		if st.Cmd == cmd {
			return st.Line
		}
	}
	return 0
}

// Steps is how many steps the story has.
func (s *Story) Steps() int { return len(s.sc.Steps) }

// CRDs are the manifests of the story's crd steps: a world that plays
// the story serves them from its start (Options.CRDs).
func (s *Story) CRDs() []string {
	var out []string
	for _, st := range s.sc.Steps {
		if st.Cmd == "crd" {
			out = append(out, st.Input)
		}
	}
	return out
}

// namespaces are the namespaces the story's objects are in, sorted.
func (s *Story) namespaces() []string {
	var out []string
	for _, st := range s.sc.Steps {
		if st.Cmd != "create" {
			continue
		}
		a, _ := scenario.ParseArgs(st)
		for _, k := range a.Pos {
			if ns, _, ok := strings.Cut(k, "/"); ok && !slices.Contains(out, ns) {
				out = append(out, ns)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Prepare checks that the world serves every resource the story names,
// and creates the namespaces the story's objects are in, and more: the
// story starts in a cluster that has them.
func (w *World) Prepare(ctx context.Context, s *Story, more ...string) error {
	for _, st := range s.sc.Steps {
		if !slices.Contains(writes, st.Cmd) {
			// Only a write names a resource here: the language gives
			// start (its informers' own, in the simulator) a default
			// one, which a controller's world has no use for.
			continue
		}
		a, _ := scenario.ParseArgs(st)
		if a.Resource == "" {
			continue
		}
		if _, ok := w.serves(a.Resource); !ok {
			return fmt.Errorf("%s:%d: the world does not serve %s; it serves %s", s.sc.File, st.Line, a.Resource, strings.Join(w.Resources(), ", "))
		}
	}
	ns := w.own.Resource(namespaces.GroupVersionResource())
	all := s.namespaces()
	for _, n := range more {
		if !slices.Contains(all, n) {
			all = append(all, n)
		}
	}
	for _, name := range all {
		u := objects.Example(namespaces)
		u.SetName(name)
		if _, err := ns.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("controllertest: creating namespace %s: %w", name, err)
		}
	}
	return nil
}

// Do plays one command of a story (a step, or a fault placed between
// two) and settles the world after it. text is the command as a story
// file has it; st is the story's step when it is one.
func (w *World) Do(ctx context.Context, s *Story, st *scenario.Step, text string) error {
	if err := w.do(ctx, s, st, text); err != nil {
		return err
	}
	return w.SettleAndCollect(ctx)
}

func (w *World) do(ctx context.Context, s *Story, st *scenario.Step, text string) error {
	cmd, _, _ := strings.Cut(text, " ")
	var a scenario.Args
	if st != nil {
		var err error
		if a, err = scenario.ParseArgs(*st); err != nil {
			return err
		}
	}
	switch cmd {
	case "crd", "settle":
		return nil
	case "create":
		return w.create(ctx, s, a)
	case "update":
		return w.update(ctx, s, a)
	case "delete":
		return w.delete(ctx, a)
	case "advance":
		d, err := time.ParseDuration(a.Pos[0])
		if err != nil {
			return err
		}
		return w.Advance(ctx, d)
	case "gc":
		_, err := w.CollectGarbage(ctx)
		return err
	}
	return w.Fault(ctx, cmd)
}

// create creates each object a create step names.
func (w *World) create(ctx context.Context, s *Story, a scenario.Args) error {
	res, custom := w.resource(s, a.Resource)
	for _, key := range a.Pos {
		u, err := objects.New(res, custom, key, objects.ChangeOf(a))
		if err != nil {
			return err
		}
		if ownerRes, ownerKey := a.Owner(); ownerRes != "" {
			if err := w.setOwner(ctx, s, u, ownerRes, ownerKey); err != nil {
				return err
			}
		}
		made, err := w.of(res, u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create %s %s: %w", res.Resource, key, err)
		}
		w.mu.Lock()
		if w.made == nil {
			w.made = map[types.UID]bool{}
		}
		w.made[made.GetUID()] = true
		w.mu.Unlock()
	}
	return nil
}

// update sets what an update step gives on the object as stored, times=
// times over.
func (w *World) update(ctx context.Context, s *Story, a scenario.Args) error {
	res, _ := w.resource(s, a.Resource)
	times := 1
	if v, ok := a.Value("times"); ok {
		times, _ = strconv.Atoi(v)
	}
	ns, name := scenario.SplitKey(a.Pos[0])
	c := w.of(res, ns)
	for range times {
		u, err := c.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("update %s %s: %w", res.Resource, a.Pos[0], err)
		}
		if err := objects.ChangeOf(a).Apply(u); err != nil {
			return err
		}
		if _, err := c.Update(ctx, u, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("update %s %s: %w", res.Resource, a.Pos[0], err)
		}
	}
	return nil
}

// delete deletes each object a delete step names.
func (w *World) delete(ctx context.Context, a scenario.Args) error {
	for _, key := range a.Pos {
		res := w.named(a.Resource)
		ns, name := scenario.SplitKey(key)
		if err := w.of(res, ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete %s %s: %w", res.Resource, key, err)
		}
	}
	return nil
}

// setOwner makes the owner step's owner= names u's controller, by the
// uid it has now.
func (w *World) setOwner(ctx context.Context, s *Story, u *unstructured.Unstructured, ownerRes, ownerKey string) error {
	res, _ := w.resource(s, ownerRes)
	ns, name := scenario.SplitKey(ownerKey)
	owner, err := w.of(res, ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("owner %s %s: %w", ownerRes, ownerKey, err)
	}
	yes := true
	u.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: res.APIVersion(), Kind: res.Kind, Name: name,
		UID: types.UID(owner.GetUID()), Controller: &yes, BlockOwnerDeletion: &yes}})
	return nil
}

// resource is the resource a step names, and its definition if custom.
func (w *World) resource(s *Story, name string) (listwatch.Resource, *scenario.CustomResource) {
	for _, c := range w.custom {
		if c.Plural == name || c.Name() == name {
			return w.named(c.Plural), &c
		}
	}
	return w.named(name), nil
}

// named is the resource served under name (Prepare has checked that
// one is).
func (w *World) named(name string) listwatch.Resource {
	r, _ := w.serves(name)
	return r
}

// serves is the resource served under name: its plural, or
// plural.group.
func (w *World) serves(name string) (listwatch.Resource, bool) {
	for _, r := range w.resources {
		if r.Resource == name || r.Resource+"."+r.Group == name {
			return r, true
		}
	}
	return listwatch.Resource{}, false
}

// of is the story's client of res in namespace ns.
func (w *World) of(res listwatch.Resource, ns string) dynamic.ResourceInterface {
	c := w.own.Resource(res.GroupVersionResource())
	if res.Namespaced {
		return c.Namespace(ns)
	}
	return c
}
