package scenario

import (
	"fmt"
	"strings"
)

// The dry run of factories and controllers: a factory is made once and
// used after, a controller goes on an informer that exists, and several
// controllers each have a name.

// startController checks a start-controller against the controllers
// there already and the factory it names.
func (p *dryRun) startController(line int, a Args) error {
	name, _ := a.Value("name")
	f, onFactory := a.Value("informer")
	switch {
	case onFactory:
		if err := p.factoryInformer("start-controller informer="+f, f); err != nil {
			return err
		}
	case p.running && p.queue:
		return fmt.Errorf("start-controller puts a controller on informers, and start-queue's bare queues have no handlers: use start")
	}
	for other, at := range p.controllers {
		switch {
		case other == "" && name == "":
			return fmt.Errorf("start-controller: the controllers of line %d are still there; stop stops them with the informers "+
				"(to run several, give each a name=)", at)
		case other == name:
			return fmt.Errorf("start-controller name=%s: a controller of that name started at line %d", name, at)
		case other == "" || name == "":
			return fmt.Errorf("start-controller: with several controllers, each needs a name= (the one of line %d has none)", at)
		}
	}
	if a.Flags["writes"] {
		if _, res := InformerRef(f); onFactory && res != DefaultResource {
			return fmt.Errorf("start-controller writes informer=%s: the controller that writes records a pod's spec.image, and this informer holds %s", f, res)
		}
		if !onFactory && p.running && p.startResource != DefaultResource {
			return fmt.Errorf("start-controller writes: the controller that writes records a pod's spec.image, and start's informer holds %s", p.startResource)
		}
		p.startWriter = !onFactory
		if p.ctlWriter != 0 {
			return fmt.Errorf("start-controller writes: the controller of line %d writes already, and only one may "+
				"(two writing the same annotation would conflict with each other)", p.ctlWriter)
		}
		p.ctlWriter = line
	}
	p.controllers[name] = line
	if p.controller == 0 {
		p.controller = line
	}
	p.ctlWaits = !onFactory && !p.running
	return nil
}

// factoryStep checks the factory commands: a factory is made once, and
// used after it is made.
func (p *dryRun) factoryStep(line int, cmd, name, resource string) error {
	if cmd == "factory" {
		switch at, ok := p.factories[name]; {
		case ok:
			return fmt.Errorf("factory %s: a factory of that name was made at line %d", name, at)
		case len(p.factories) >= MaxFactories:
			return fmt.Errorf("factory %s: a scenario has at most %d factories", name, MaxFactories)
		case p.queue && p.started:
			return fmt.Errorf("factory %s: this scenario runs start-queue's bare queues; a run has those or informers from factories, not both", name)
		}
		p.factories[name] = line
		return nil
	}
	if _, ok := p.factories[name]; !ok {
		return fmt.Errorf("%s %s: no factory named %q is made before this line (factory %s makes one)", cmd, name, name, name)
	}
	if cmd == "informer" {
		if len(p.factoryHasInf) >= MaxInformers-1 && !p.factoryHasInf[name+"/"+resource] {
			return fmt.Errorf("informer %s %s: a scenario's factories make at most %d informers", name, resource, MaxInformers-1)
		}
		p.factoryHasInf[name+"/"+resource] = true
		p.factoryHasAny[name] = true
	}
	if cmd == "factory-start" && p.factoryHasAny[name] {
		p.factoryRuns[name] = true
	}
	return nil
}

// oneCustomKind refuses a factory's informer of a second custom
// resource. client-go's SharedInformerFactory keys an informer by the Go
// type of its objects (InformerFor), and every custom resource's is
// *unstructured.Unstructured: it would hand out the first one's
// informer. cachelab's factory keys by resource and would not, so the
// two could not be compared. Real controllers use a factory of their
// own per kind here (or the dynamic one, keyed by resource).
func (p *dryRun) oneCustomKind(factory, resource string) error {
	for k := range p.factoryHasInf {
		f, res, _ := strings.Cut(k, "/")
		if f == factory && res != resource && p.customKinds[res] {
			return fmt.Errorf("informer %s %s: factory %s has an informer of the custom resource %s already, and client-go's SharedInformerFactory keys "+
				"an informer by its objects' Go type, which is *unstructured.Unstructured for every custom resource: it would hand out the %s informer for %s. "+
				"Ask another factory for it", factory, resource, factory, res, res, resource)
		}
	}
	if p.customKinds == nil {
		p.customKinds = map[string]bool{}
	}
	p.customKinds[resource] = true
	return nil
}

// factoryInformer checks that what cmd names (informer=<factory> or
// <factory>/<resource>) is a factory that has made that informer.
func (p *dryRun) factoryInformer(cmd, ref string) error {
	f, res := InformerRef(ref)
	switch _, ok := p.factories[f]; {
	case !ok:
		return fmt.Errorf("%s: no factory named %q is made before this line (factory %s makes one)", cmd, f, f)
	case !p.factoryHasInf[f+"/"+res] && res == DefaultResource:
		return fmt.Errorf("%s: factory %s has not made its informer by here (informer %s asks for it)", cmd, f, f)
	case !p.factoryHasInf[f+"/"+res]:
		return fmt.Errorf("%s: factory %s has not made its %s informer by here (informer %s %s asks for it)", cmd, f, res, f, res)
	}
	return nil
}

// firstFactory is the line of the first factory, or 0.
func (p *dryRun) firstFactory() int {
	first := 0
	for _, at := range p.factories {
		if first == 0 || at < first {
			first = at
		}
	}
	return first
}
