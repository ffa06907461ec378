package htmlview

import (
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
)

// A fault is a band over the timeline: the steps from From to To (step
// numbers, inclusive) during which the world was broken in one way.
type fault struct {
	Kind string `json:"kind"` // what the band says: "disconnected", "etcd m2 down", ...
	From int    `json:"from"`
	To   int    `json:"to"`
	Cmd  string `json:"cmd"` // the command that opened it
}

// A lever is how a scenario command shows on the timeline: it opens a
// band that a later command closes (disconnect ... reconnect), or marks
// its own step only (compact).
type lever struct {
	band  string
	opens bool // a band until a command with closes == band
	// closes names the band this command ends.
	closes string
}

// levers maps a scenario command's first word to its band. The commands
// are sim's (cachelab scenarios --commands); one missing here is simply
// not drawn as a fault.
var levers = map[string]lever{
	"disconnect":        {band: "disconnected", opens: true},
	"reconnect":         {closes: "disconnected"},
	"hold-cache":        {band: "cache held", opens: true},
	"release-cache":     {closes: "cache held"},
	"pause":             {band: "queue paused", opens: true},
	"resume":            {closes: "queue paused"},
	"etcd-stop-member":  {band: "etcd {1} down", opens: true},
	"etcd-start-member": {closes: "etcd {1} down"},
	"compact":           {band: "compacted"},
	"close-watch":       {band: "watch closed"},
	"restart-etcd":      {band: "etcd down (restart)"},
	"etcd-snapshot":     {band: "etcd down (snapshot)"},
	"etcd-restore":      {band: "etcd down (restore)"},
	"etcd-wipe":         {band: "etcd down (wipe)"},
	"restart-apiserver": {band: "apiserver restart"},
	"fail-next":         {band: "request fails"},
	"expire-continue":   {band: "continue expires"},
}

// faults is the run's bands, in the order they open: from the steps'
// commands, and a "watch closed" mark where a side saw the server close
// a watch that no command closed. A band still open at the end runs to
// the last step.
func faults(steps []trace.StepResult) []fault {
	var out []fault
	open := map[string]int{} // band -> index in out
	last := 0
	for _, sr := range steps {
		last = sr.Index
		fields := strings.Fields(sr.Cmd)
		if len(fields) == 0 {
			continue
		}
		lv, ok := levers[fields[0]]
		arg := ""
		if len(fields) > 1 {
			arg = fields[1]
		}
		switch {
		case ok && lv.opens:
			band := strings.ReplaceAll(lv.band, "{1}", arg)
			if _, already := open[band]; !already {
				open[band] = len(out)
				out = append(out, fault{Kind: band, From: sr.Index, To: -1, Cmd: sr.Cmd})
			}
		case ok && lv.closes != "":
			band := strings.ReplaceAll(lv.closes, "{1}", arg)
			if i, was := open[band]; was {
				out[i].To = sr.Index
				delete(open, band)
			}
		case ok:
			out = append(out, fault{Kind: lv.band, From: sr.Index, To: sr.Index, Cmd: sr.Cmd})
		case watchEnded(sr):
			out = append(out, fault{Kind: "watch closed", From: sr.Index, To: sr.Index, Cmd: sr.Cmd})
		}
	}
	for i := range out {
		if out[i].To < 0 {
			out[i].To = last
		}
	}
	if out == nil {
		out = []fault{}
	}
	return out
}

// watchEnded reports whether a side saw the server close a watch in the
// step.
func watchEnded(sr trace.StepResult) bool {
	for _, e := range sr.Sides[trace.Cachelab] {
		if e.Kind == trace.KindWatchEnd {
			return true
		}
	}
	return false
}
