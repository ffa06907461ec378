// Package difftest is the machinery of cachelab's differential tests: the
// same operations go to a cachelab component and to its client-go
// counterpart, and everything observable is compared with go-cmp.
//
// It holds what every package's tests share:
//   - object builders (Pod, BadObject) so tests speak in real apimachinery
//     objects with names, namespaces, labels and resourceVersions;
//   - Norm and NormErr, which map cachelab's and client-go's types (Deltas,
//     tombstones, ReplacedAllInfo, KeyError, the closed-queue error) onto one
//     neutral form, so go-cmp can compare them;
//   - Known, a KnownObjects whose ListKeys is sorted, so that a queue's
//     tombstone and resync order is the same on both sides (client-go's own
//     indexer lists keys in random map order);
//   - Tomb, a tombstone each side receives as its own
//     DeletedFinalStateUnknown type;
//   - Queue, one interface over the six queues (three each side), and
//     RunQueueScript, which runs an operation script against two of them and
//     fails at the first divergence;
//   - RunStoreScript, the same for cachelab's Cache and client-go's Indexer,
//     comparing the whole observable state after every operation;
//   - Decoder, which turns fuzz input into queue and store scripts;
//   - recording loggers (InfoLogger, SiteLogger, CaptureReports and the
//     worlds' panic and report recorders) that note with every line where
//     it says it was logged (sites.go), so that a test compares that too.
//
// This package imports client-go. Only tests import this package, so the
// from-scratch packages still do not depend on client-go.
package difftest
