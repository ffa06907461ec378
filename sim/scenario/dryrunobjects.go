package scenario

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// The dry run of an object's life beyond create and delete: finalizers
// that hold a deleted object until an update removes the last of them
// (REFERENCE.md E18), and owners whose absence the garbage collector's
// sweep (gc) turns into the dependent's deletion (E19). The run follows
// kube-apiserver's registry and the garbage collector; so does this, so
// that a step the run would fail on is refused with its file and line.

// objMeta is what the dry run keeps of an object's metadata.
type objMeta struct {
	finalizers []string
	deleting   bool           // a delete marked it; its finalizers hold it
	owner      string         // its owner's ObjectRef, or ""
	ownerLine  int            // the line that created the owner it names
	spec       map[string]any // a custom resource's spec, as its writes left it
}

// setFinalizers records an update's finalizers= of ref, and says whether
// the update deletes it (it was being deleted, and none are left); an
// object being deleted may not gain a finalizer (kube-apiserver's 422).
func (p *dryRun) setFinalizers(cmd, ref string, fins []string) (deleted bool, err error) {
	m := p.meta[ref]
	if m.deleting {
		var extra []string
		for _, f := range fins {
			if !slices.Contains(m.finalizers, f) {
				extra = append(extra, f)
			}
		}
		if len(extra) > 0 {
			sort.Strings(extra)
			return false, fmt.Errorf("%s %s: %s is being deleted (deleted before this line, held by its finalizers): "+
				"no new finalizers can be added if the object is being deleted, found new finalizers %#v", cmd, ref, ref, extra)
		}
		if len(fins) == 0 {
			p.remove(ref)
			return true, nil
		}
	}
	m.finalizers = fins
	p.meta[ref] = m
	return false, nil
}

// deleteObject is a delete of ref: gone, or, held by finalizers, marked.
func (p *dryRun) deleteObject(ref string) {
	if m := p.meta[ref]; len(m.finalizers) > 0 {
		m.deleting = true
		p.meta[ref] = m
		return
	}
	p.remove(ref)
}

func (p *dryRun) remove(ref string) {
	delete(p.objects, ref)
	delete(p.meta, ref)
}

// setOwner records a create's owner= of ref; the owner must exist.
func (p *dryRun) setOwner(cmd, ref, ownerRef string) error {
	at, ok := p.objects[ownerRef]
	if !ok {
		return fmt.Errorf("%s %s: owner %s: no create before this line makes it (an ownerReference carries the owner's uid)", cmd, ref, ownerRef)
	}
	m := p.meta[ref]
	m.owner, m.ownerLine = ownerRef, at
	p.meta[ref] = m
	return nil
}

// gc is the garbage collector's sweep: an object whose owner is gone (or
// is another object of the same name, made since) is deleted, over and
// over until none is left; what finalizers hold stays, being deleted,
// and so keeps its own dependents.
func (p *dryRun) gc() {
	for changed := true; changed; {
		changed = false
		for _, ref := range slices.Sorted(maps.Keys(p.meta)) {
			m, ok := p.meta[ref]
			if !ok || m.owner == "" || m.deleting || p.objects[m.owner] == m.ownerLine {
				continue
			}
			p.deleteObject(ref)
			changed = true
		}
	}
}

// cloneMeta copies the metadata for a snapshot.
func cloneMeta(m map[string]objMeta) map[string]objMeta {
	out := make(map[string]objMeta, len(m))
	for k, v := range m {
		v.finalizers = slices.Clone(v.finalizers)
		out[k] = v
	}
	return out
}
