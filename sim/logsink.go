package sim

import (
	"fmt"
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

// handlerLogger is the logger a scenario's handler is registered with,
// on either side. The informer logs through it what it changed about the
// handler's resync period (P7), in client-go's words; each such level-0
// Info entry becomes a "log" line, recorded the same way on both sides
// and compared. When a handler lowers the informer's check period, the
// lines about every listener's new period come in map order: they are a
// batch whose order is free (trace.OrderLog).
func handlerLogger(rec *trace.Recorder, name string) klog.Logger {
	return logr.New(&logSink{rec: rec, name: name})
}

type logSink struct {
	rec  *trace.Recorder
	name string
}

func (s *logSink) Init(logr.RuntimeInfo)          {}
func (s *logSink) Enabled(level int) bool         { return level == 0 }
func (s *logSink) Error(error, string, ...any)    {}
func (s *logSink) WithName(string) logr.LogSink   { return s }
func (s *logSink) WithValues(...any) logr.LogSink { return s }

func (s *logSink) Info(_ int, msg string, kv ...any) {
	parts := []string{s.name + ": " + strings.TrimPrefix(msg, "Warning: ")}
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, fmt.Sprintf("%v=%v", kv[i], kv[i+1]))
	}
	s.rec.Record(trace.Event{Layer: trace.LayerLog, Kind: trace.KindLog, Detail: strings.Join(parts, " "), Order: trace.OrderLog})
}
