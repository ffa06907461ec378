package metrics

import (
	"fmt"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
)

// names holds every reserved InformerName of the process.
var names = struct {
	sync.Mutex
	byName map[string]*InformerName
}{byName: map[string]*InformerName{}}

// InformerName is a name reserved for one informer (or one factory of
// informers) in this process. client-go: InformerName.
type InformerName struct {
	name     string
	reserved atomic.Bool // false once released

	mu        sync.Mutex
	resources map[schema.GroupVersionResource]*atomic.Bool // each pair's flag
}

// NewInformerName reserves name. It fails if name is empty or is reserved
// and not yet released. Call Release when the informers are gone.
func NewInformerName(name string) (*InformerName, error) {
	if name == "" {
		return nil, fmt.Errorf("informer name cannot be empty")
	}
	names.Lock()
	defer names.Unlock()
	if old, ok := names.byName[name]; ok && old.reserved.Load() {
		return nil, fmt.Errorf("informer name %q is already registered", name)
	}
	n := &InformerName{name: name, resources: map[schema.GroupVersionResource]*atomic.Bool{}}
	n.reserved.Store(true)
	names.byName[name] = n
	return n, nil
}

// WithResource pairs the name with a resource. The first pair for a
// resource is reserved (its informer publishes metrics); a later pair for
// the same resource, or any pair made from a nil or released name, is not.
func (n *InformerName) WithResource(gvr schema.GroupVersionResource) InformerNameAndResource {
	if n == nil {
		return InformerNameAndResource{gvr: gvr}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	id := InformerNameAndResource{name: n.name, gvr: gvr, reserved: new(atomic.Bool)}
	if !n.reserved.Load() {
		return id
	}
	if _, taken := n.resources[gvr]; taken {
		klog.TODO().Error(nil, "Duplicate informer registration - metrics will not be published",
			"informerName", n.name, "group", gvr.Group, "version", gvr.Version, "resource", gvr.Resource)
		return id
	}
	id.reserved.Store(true)
	n.resources[gvr] = id.reserved
	return id
}

// Release gives the name back: every pair made from it stops being
// reserved, and NewInformerName may reserve the name again.
func (n *InformerName) Release() {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, r := range n.resources {
		r.Store(false)
	}
	n.resources = map[schema.GroupVersionResource]*atomic.Bool{}
	n.reserved.Store(false)

	names.Lock()
	defer names.Unlock()
	// By name, as client-go: a second Release of a name that was
	// reserved again meanwhile frees the new holder's name too.
	delete(names.byName, n.name)
}

// Name is the reserved name ("" for a nil InformerName).
func (n *InformerName) Name() string {
	if n == nil {
		return ""
	}
	return n.name
}

// InformerNameAndResource identifies one informer for its metrics: a name
// and the resource it watches. The zero value is not reserved.
// client-go: InformerNameAndResource.
type InformerNameAndResource struct {
	name     string
	gvr      schema.GroupVersionResource
	reserved *atomic.Bool
}

// Reserved reports whether this informer may publish metrics now: the
// pair was the first for its resource and its name is not released.
func (id InformerNameAndResource) Reserved() bool {
	return id.reserved != nil && id.reserved.Load()
}

// Name is the informer's name.
func (id InformerNameAndResource) Name() string { return id.name }

// GroupVersionResource is the resource the informer watches.
func (id InformerNameAndResource) GroupVersionResource() schema.GroupVersionResource {
	return id.gvr
}

// ReleaseAll releases every reserved name, for tests that reuse names.
// client-go: ResetInformerNamesForTesting.
func ReleaseAll() {
	names.Lock()
	all := make([]*InformerName, 0, len(names.byName))
	for _, n := range names.byName {
		all = append(all, n)
	}
	names.Unlock()
	for _, n := range all {
		n.Release()
	}
}
