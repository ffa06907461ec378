package informer

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/cachelab/cachelab/deltafifo"
	"github.com/cachelab/cachelab/store"
)

// The processing step: what an informer does with each delta it pops,
// first to its store, then to its handlers. It mirrors processDeltas,
// processDeltasInBatch and processReplacedAllInfo in client-go's
// controller.go, which the shared informer and the plain one (NewInformer)
// both use: the shared informer's notifications go to its processor, which
// hands them to each listener; the plain informer's go straight to its one
// handler, on the processing goroutine.

// processing applies popped deltas to a store and says what changed.
type processing struct {
	store   *store.Cache
	deliver func(n Notification, sync bool) // a sync notification reaches only due handlers (P6)
	traceFn func(Event)
}

func (p *processing) trace(e Event) {
	if p.traceFn != nil {
		p.traceFn(e)
	}
}

// processDeltas applies one popped item (a Deltas) to the indexer and
// notifies the handlers, delta by delta (P1-P5). A failed store write ends
// the item with an error, which the processing loop drops (P11).
func (p *processing) processDeltas(deltas deltafifo.Deltas, inInitialList bool) error {
	for _, d := range deltas {
		switch d.Type {
		case deltafifo.ReplacedAll:
			info, ok := d.Object.(deltafifo.ReplacedAllInfo)
			if !ok {
				return fmt.Errorf("informer: ReplacedAll did not contain ReplacedAllInfo: %T", d.Object)
			}
			if err := p.processReplacedAll(info, inInitialList); err != nil {
				return err
			}
		case deltafifo.SyncAll:
			if _, ok := d.Object.(deltafifo.SyncAllInfo); !ok {
				return fmt.Errorf("informer: SyncAll did not contain SyncAllInfo: %T", d.Object)
			}
			// P4: every cached object, unchanged; only due listeners hear it.
			for _, obj := range p.store.List() {
				p.notifyUpdate(obj, obj)
			}
			return nil // client-go ends the item here too
		case deltafifo.Sync, deltafifo.Replaced, deltafifo.Added, deltafifo.Updated:
			if err := p.upsert(d.Object, inInitialList); err != nil {
				return err
			}
		case deltafifo.Deleted:
			if err := p.store.Delete(d.Object); err != nil {
				return err
			}
			p.notify(Notification{Kind: KindDelete, Old: d.Object}, false)
		case deltafifo.Bookmark:
			info, ok := d.Object.(deltafifo.BookmarkInfo)
			if !ok {
				return fmt.Errorf("informer: bookmark delta did not contain BookmarkInfo: %T", d.Object)
			}
			p.store.Bookmark(info.ResourceVersion) // P5
		}
	}
	return nil
}

// upsert is P1: an update if the key is cached, else an add.
func (p *processing) upsert(obj any, inInitialList bool) error {
	if old, exists, err := p.store.Get(obj); err == nil && exists {
		if err := p.store.Update(obj); err != nil {
			return err
		}
		p.notifyUpdate(old, obj)
		return nil
	}
	if err := p.store.Add(obj); err != nil {
		return err
	}
	p.notify(Notification{Kind: KindAdd, New: obj, InInitialList: inInitialList}, false)
	return nil
}

// processBatch is P12: a run of 2+ deltas for distinct keys. The old
// objects are read first, the writes go to the indexer in one transaction
// (readers never see half a batch), then the handlers hear every delta in
// order. If some entries could not be keyed, only the others are notified.
func (p *processing) processBatch(deltas []deltafifo.Delta, inInitialList bool) error {
	txns := make([]store.Transaction, 0, len(deltas))
	notes := make([]Notification, 0, len(deltas))
	for _, d := range deltas {
		switch d.Type {
		case deltafifo.Sync, deltafifo.Replaced, deltafifo.Added, deltafifo.Updated:
			if old, exists, err := p.store.Get(d.Object); err == nil && exists {
				txns = append(txns, store.Transaction{Type: store.TransactionTypeUpdate, Object: d.Object})
				notes = append(notes, Notification{Kind: KindUpdate, Old: old, New: d.Object})
			} else {
				txns = append(txns, store.Transaction{Type: store.TransactionTypeAdd, Object: d.Object})
				notes = append(notes, Notification{Kind: KindAdd, New: d.Object, InInitialList: inInitialList})
			}
		case deltafifo.Deleted:
			txns = append(txns, store.Transaction{Type: store.TransactionTypeDelete, Object: d.Object})
			notes = append(notes, Notification{Kind: KindDelete, Old: d.Object})
		default:
			return fmt.Errorf("Delta type %s is not supported in batch processing", d.Type)
		}
	}
	p.trace(Event{Step: StepTransaction, Count: len(txns)})
	err := p.store.Transaction(txns...)
	var txnErr *store.TransactionError
	if errors.As(err, &txnErr) {
		for _, i := range txnErr.SuccessfulIndices {
			p.notifyNote(notes[i])
		}
		return fmt.Errorf("not all items in the batch successfully processed: %s", txnErr.Error())
	}
	if err != nil {
		return err
	}
	for _, n := range notes {
		p.notifyNote(n)
	}
	return nil
}

// processReplacedAll is P3, a relist in one step: tombstones for cached
// keys the list no longer has, the indexer replaced (with the list's RV),
// then OnDelete for each tombstone and OnUpdate or OnAdd per listed object,
// in list order.
func (p *processing) processReplacedAll(info deltafifo.ReplacedAllInfo, inInitialList bool) error {
	listed := make(map[string]bool, len(info.Objects))
	for _, obj := range info.Objects {
		key, err := store.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			return store.KeyError{Obj: obj, Err: err}
		}
		listed[key] = true
	}
	notes := make([]Notification, 0, len(info.Objects))
	for _, key := range p.store.ListKeys() {
		if listed[key] {
			continue
		}
		old, exists, err := p.store.GetByKey(key)
		if err != nil || !exists {
			old = nil
		}
		notes = append(notes, Notification{Kind: KindDelete, Old: store.DeletedFinalStateUnknown{Key: key, Obj: old}})
	}
	for _, obj := range info.Objects {
		if old, exists, err := p.store.Get(obj); err == nil && exists {
			notes = append(notes, Notification{Kind: KindUpdate, Old: old, New: obj})
		} else {
			notes = append(notes, Notification{Kind: KindAdd, New: obj, InInitialList: inInitialList})
		}
	}
	if err := p.store.Replace(info.Objects, info.ResourceVersion); err != nil {
		return err
	}
	for _, n := range notes {
		p.notifyNote(n)
	}
	return nil
}

// notifyNote sends n the way its kind is sent.
func (p *processing) notifyNote(n Notification) {
	if n.Kind == KindUpdate {
		p.notifyUpdate(n.Old, n.New)
		return
	}
	p.notify(n, false)
}

// notifyUpdate sends an update, marked as a sync when old and new share a
// resourceVersion: a resync, or a relist that found the object unchanged
// (P6).
func (p *processing) notifyUpdate(old, obj any) {
	p.notify(Notification{Kind: KindUpdate, Old: old, New: obj}, sameResourceVersion(old, obj))
}

func sameResourceVersion(a, b any) bool {
	am, err := meta.Accessor(a)
	if err != nil {
		return false
	}
	bm, err := meta.Accessor(b)
	if err != nil {
		return false
	}
	return am.GetResourceVersion() == bm.GetResourceVersion()
}

func (p *processing) notify(n Notification, sync bool) {
	p.trace(Event{Step: StepNotify, Notification: n, Sync: sync})
	p.deliver(n, sync)
}
