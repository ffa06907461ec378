package store

import "fmt"

// TransactionType says what one entry of a transaction does.
type TransactionType string

// The three kinds of transaction entry.
const (
	TransactionTypeAdd    TransactionType = "Add"
	TransactionTypeUpdate TransactionType = "Update"
	TransactionTypeDelete TransactionType = "Delete"
)

// Transaction is one entry of a batch of writes applied under one lock.
// Informers use it to write a batch of deltas at once (P12), so readers of
// the store never see half a batch.
type Transaction struct {
	Object any
	Type   TransactionType
}

// TransactionError reports the entries of a transaction that could not be
// keyed. Those were skipped; the others (SuccessfulIndices, positions in the
// caller's slice) were applied.
type TransactionError struct {
	SuccessfulIndices []int
	TotalTransactions int
	Errors            []error
}

// Error has the same text as client-go's.
func (e *TransactionError) Error() string {
	return fmt.Sprintf("failed to execute (%d/%d) transactions failed due to: %v",
		e.TotalTransactions-len(e.SuccessfulIndices), e.TotalTransactions, e.Errors)
}

// KeyedTransaction is a transaction entry whose key is already computed.
type KeyedTransaction struct {
	Transaction
	Key string
}

// Transaction applies the entries in order under one lock, then remembers
// the resourceVersion of the last entry's object (if it has metadata).
func (s *ThreadSafeStore) Transaction(txns ...KeyedTransaction) {
	if len(txns) == 0 {
		return
	}
	rv, hasMeta := resourceVersionOf(txns[len(txns)-1].Object)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range txns {
		switch t.Type {
		case TransactionTypeAdd, TransactionTypeUpdate:
			s.putLocked(t.Key, t.Object)
		case TransactionTypeDelete:
			s.deleteLocked(t.Key)
		}
	}
	if hasMeta {
		s.rememberLocked(rv)
	}
}

// Transaction keys every entry and applies those that could be keyed, in
// one step. It returns nil when all were applied, else a *TransactionError.
// Unlike Add and Update, it does not run the store's transformer: the
// informer that uses it has transformed the objects already (S5).
func (c *Cache) Transaction(txns ...Transaction) error {
	keyed := make([]KeyedTransaction, 0, len(txns))
	applied := make([]int, 0, len(txns))
	var errs []error
	for i, t := range txns {
		key, err := c.keyFunc(t.Object)
		if err != nil {
			errs = append(errs, KeyError{t.Object, err})
			continue
		}
		applied = append(applied, i)
		keyed = append(keyed, KeyedTransaction{t, key})
	}
	c.items.Transaction(keyed...)
	if len(errs) > 0 {
		return &TransactionError{SuccessfulIndices: applied, TotalTransactions: len(txns), Errors: errs}
	}
	return nil
}
