// Package recording records what an informer receives from a cluster, as
// a session of JSON lines, reads a session back, and serves it as a
// scripted server, so that a replay can play it to other informers.
//
//	record:  Record ──▶ informer ──▶ Recorder ──▶ wire.ListerWatcher ══HTTPS══▶ cluster
//	                                    └──▶ Writer ──▶ session.jsonl
//	replay:  session.jsonl ──▶ Read ──▶ NewHistory ──▶ NewServer ◀── both informers
//
// Recording. Record runs cachelab's informer of pods, configmaps,
// secrets or deployments (Resources; the default stack)
// through a Recorder, which stands between the informer and package
// wire's ListerWatcher and writes each fact as a Line (a Writer stamps
// its At, the time since the recording began): the session line, each
// try of each request, each LIST's page, each WATCH with its events and
// its end, each handler call, then the informer's cache and an end line.
// What the informer's own stop makes its client say (an ERROR event
// "context canceled", a failed LIST) is left out: it is not the server's.
// Reduce is what a line keeps of an object: by default its names, labels
// and resourceVersion; Options.Full keeps it whole.
//
// Reading. Read (ReadContext, which a signal stops between two lines)
// checks each line as it goes (a known kind, the format's Version, times
// that never go back, nothing after the end line) and holds it to the
// lines before it (check.go: watches opened before their events, known
// event types, objects' fields of the right types, resourceVersions that
// never go back), and names the first bad one as file:line. A last line
// cut short, as a recording killed mid-line leaves it, is left out
// (Session.Cut). A session holds at most MaxSize bytes and MaxLines
// lines. NewHistory arranges a Session as
// a History: Segments, each a snapshot (a LIST, or a watch-list's initial
// events) and the changes that came after it; between two segments is a
// gap, where the recorded informer listed again.
//
// Replaying. A Server answers LISTs and WATCHes from a History on a
// clock: at each moment, what the recorded server had said by then, and
// each event at the moment it reached the recorded informer. Its answers
// depend on nothing but the request and the clock, so a replay is the
// same on every run. Where the history has a gap, a watch ends with
// 410 Gone, as a server's would.
//
// cmd/cachelab's record command calls Record; its replay command calls
// Read, and package sim (sim/replay.go) makes the replay's scenario from
// the History and puts a Server behind both sides' connections, wrapped
// by sim/world as a ReplayServer. This package imports neither sim nor
// client-go.
package recording
