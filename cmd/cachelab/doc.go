// Cachelab runs scenarios: small scripts of writes to etcd, connection
// faults and clock jumps, played to cachelab's informer and client-go's side
// by side, with a trace of every request, watch event, delta, indexer change
// and handler call.
//
// Usage:
//
//	cachelab run <scenario name or file> [flags]
//	cachelab scenarios [--commands]
//	cachelab scenarios <name> [--file]
//	cachelab version
//
// A run starts an etcd inside the process (or connects to
// --etcd-endpoints), starts both informers over it, and carries out the
// scenario one step at a time. After each step it waits until both have
// settled, compares everything they did, and prints the step:
//
//	scenario file ──► sim.Session.Step ──► etcd ──► cachelab's informer ──┐
//	                                           └──► client-go's informer ─┴──► compare ──► trace
//
// The run stops at the first step where the two differ. With --output
// json it writes JSON lines instead of text (sim/trace/SCHEMA.md), which
// always end with a summary record, after an error record when the run
// failed (failure.go). With --output html=FILE it prints the text trace
// and writes the run as a timeline page to FILE once it has ended
// (html.go, sim/trace/htmlview). With --output mermaid it draws the run,
// once it is over, as a Mermaid sequence diagram (mermaid.go,
// sim/trace/mermaid). --only and --object narrow what text and mermaid
// show (filters.go). The text trace summarizes a step's large groups of
// alike lines (--full shows them), wraps to the terminal's width, and a
// long step draws a progress line on stderr (display.go, progress.go);
// CACHELAB_TERM_WIDTH and the hidden --progress always|never stand in for
// a terminal in tests. 'scenarios NAME' wraps to the terminal's width
// too, and 'scenarios --commands' to 80 columns when there is none
// (describe.go, commandlist.go).
//
// Exit status: 0 when client-go agreed with cachelab at every step; 1 when
// they differed; 2 for bad input (an unknown command, flag or scenario, a
// missing, malformed or non-regular scenario file, a malformed etcd
// endpoint); 3 when the run could not go on (etcd, a step that failed, a
// settle timeout, an internal error); 128 plus the signal's number when a
// signal stopped it (130 SIGINT, 143 SIGTERM, 129 SIGHUP), and 141 when
// stdout was closed by its reader. However it ends, a run removes what it
// made: the embedded etcd's data directory, or its keys in an external
// etcd (signals.go). Every command is stopped the same way, through one
// path (ended, in signals.go): explore's runs too, whose etcds keep their
// data in one directory of the CLI's (datadir.go).
//
// The command is a Main value (root.go) so that tests run the whole CLI in
// the test process with their own streams: main.go only wires it to the
// process. There is one file per subcommand (run.go, scenarios.go,
// version.go).
package main
