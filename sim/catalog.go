package sim

import (
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"

	"github.com/cachelab/cachelab/sim/scenario"
)

// The built-in scenarios: a catalog of walkthroughs, each answering a
// question people ask about informers.
//
//go:embed scenarios/*.txt
var builtin embed.FS

// Catalog returns the built-in scenarios, sorted by name.
func Catalog() ([]*scenario.Scenario, error) {
	entries, err := fs.ReadDir(builtin, "scenarios")
	if err != nil {
		return nil, err
	}
	var out []*scenario.Scenario
	for _, e := range entries {
		src, err := builtin.ReadFile(path.Join("scenarios", e.Name()))
		if err != nil {
			return nil, err
		}
		sc, err := scenario.Parse(path.Join("sim", "scenarios", e.Name()), src)
		if err != nil {
			return nil, err
		}
		sc.Builtin = true
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// BuiltinSource returns the file of the built-in scenario name as it is
// written, for a user to copy and edit (cachelab scenarios NAME --file),
// and whether there is one.
func BuiltinSource(name string) ([]byte, bool) {
	if !fs.ValidPath(name) || strings.Contains(name, "/") {
		return nil, false
	}
	src, err := builtin.ReadFile(path.Join("scenarios", name+".txt"))
	return src, err == nil
}

// MaxScenarioSize is the largest scenario file Load reads. Scenarios are
// written by hand: the largest built-in one is under 5 KB.
const MaxScenarioSize = 1 << 20

// UnknownScenarioError is Load's error for a name that is neither a
// built-in scenario nor a file.
type UnknownScenarioError struct {
	Name    string
	BuiltIn []string // the built-in scenarios' names
}

func (e *UnknownScenarioError) Error() string {
	return fmt.Sprintf("no built-in scenario %q and no such file; built-in: %s", e.Name, strings.Join(e.BuiltIn, ", "))
}

// Load finds a scenario: a built-in one by name, or else a file. The file
// must be a regular file of at most MaxScenarioSize bytes: a named pipe
// would block the read until a writer came (Ctrl-C could not stop it), a
// device could be endless, and a directory is a mistake.
func Load(nameOrFile string) (*scenario.Scenario, error) {
	if !strings.ContainsAny(nameOrFile, `/\.`) {
		cat, err := Catalog()
		if err != nil {
			return nil, err
		}
		var names []string
		for _, sc := range cat {
			if sc.Name == nameOrFile {
				return sc, nil
			}
			names = append(names, sc.Name)
		}
		if _, err := os.Stat(nameOrFile); err != nil {
			return nil, &UnknownScenarioError{Name: nameOrFile, BuiltIn: names}
		}
	}
	src, err := readScenarioFile(nameOrFile)
	if err != nil {
		return nil, err
	}
	return scenario.Parse(nameOrFile, src)
}

// RewriteFile writes outputs (each step's StepOutput) into the expected
// blocks of the file sc was loaded from, leaving everything else as it
// is. It re-reads the file first and refuses if its steps changed since
// the run read them.
//
// The file is the user's: it is rewritten in place, through the file
// descriptor it was read from, so that a symlink stays a symlink (its
// target gets the text), a hard link sees the new text too, and the
// file's inode, mode and owner stay what they were. A file marked
// read-only is refused (CheckRewrite). Should the write fail half-way (a
// full disk), the old text is written back.
func RewriteFile(sc *scenario.Scenario, outputs []string) error {
	if sc.Builtin {
		return fmt.Errorf("%s is a built-in scenario: rewrite a copy of it, or rewrite the built-ins with go test ./sim -run TestScenarios -rewrite", sc.Name)
	}
	f, err := openRewrite(sc.File)
	if err != nil {
		return err
	}
	defer f.Close()
	src, err := readScenario(f, sc.File)
	if err != nil {
		return err
	}
	out, err := rewritten(sc, src, outputs)
	if err != nil {
		return err
	}
	return writeInPlace(f, src, out)
}

// CheckRewrite says why RewriteFile could not write file, before a run
// spends its time: it is not a regular file, it is marked read-only (no
// write bit in its mode: cachelab does not override that, even where the
// user could, as root can), or it cannot be opened to write.
func CheckRewrite(file string) error {
	f, err := openRewrite(file)
	if err != nil {
		return err
	}
	return f.Close()
}

// openRewrite opens file to read and write, following symlinks, without
// blocking (a named pipe is refused, not waited on), and checks what it
// opened.
func openRewrite(file string) (*os.File, error) {
	fi, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if kind := FileKind(fi.Mode()); kind != "" {
		return nil, fmt.Errorf("%s is %s: a scenario file must be a regular file", file, kind)
	}
	if perm := fi.Mode().Perm(); perm&0o222 == 0 {
		return nil, fmt.Errorf("%s is read-only (mode %04o); cachelab does not write over a file marked read-only: "+
			"make it writable (chmod u+w %s) or rewrite a copy", file, perm, file)
	}
	f, err := os.OpenFile(file, os.O_RDWR|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) || !now.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was opened: not rewritten", file)
	}
	return f, nil
}

// rewritten is src, the file as it is now, with outputs in its expected
// blocks, if its steps are still those sc ran.
func rewritten(sc *scenario.Scenario, src []byte, outputs []string) ([]byte, error) {
	now, err := scenario.Parse(sc.File, src)
	if err != nil {
		return nil, fmt.Errorf("not rewritten: %w", err)
	}
	if len(now.Steps) != len(sc.Steps) {
		return nil, fmt.Errorf("%s changed during the run (%d steps, then %d): not rewritten", sc.File, len(sc.Steps), len(now.Steps))
	}
	for i := range now.Steps {
		if now.Steps[i].Text != sc.Steps[i].Text {
			return nil, fmt.Errorf("%s changed during the run (%s): not rewritten", sc.File, now.Pos(now.Steps[i]))
		}
	}
	return now.Rewrite(src, outputs)
}

// writeInPlace replaces f's content, which is old, with text. If the
// write fails, it writes old back, and says whether that worked.
func writeInPlace(f *os.File, old, text []byte) error {
	err := replaceContent(f, text)
	if err == nil {
		return nil
	}
	if rerr := replaceContent(f, old); rerr != nil {
		return fmt.Errorf("%s: writing failed (%w), and so did putting the old text back (%v): the file may be cut short", f.Name(), err, rerr)
	}
	return fmt.Errorf("%s: writing failed, the old text is back: %w", f.Name(), err)
}

func replaceContent(f *os.File, text []byte) error {
	if _, err := f.WriteAt(text, 0); err != nil {
		return err
	}
	return f.Truncate(int64(len(text)))
}

// readScenarioFile reads a regular file of at most MaxScenarioSize bytes.
// It opens without blocking (O_NONBLOCK: opening a named pipe to read
// otherwise waits for a writer), then looks at what it opened, so that
// what is checked is what is read.
func readScenarioFile(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readScenario(f, name)
}

// readScenario reads f, opened from name, if it is a regular file of at
// most MaxScenarioSize bytes.
func readScenario(f *os.File, name string) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if kind := FileKind(fi.Mode()); kind != "" {
		return nil, fmt.Errorf("%s is %s: a scenario file must be a regular file", name, kind)
	}
	if fi.Size() > MaxScenarioSize {
		return nil, fmt.Errorf("%s is %d bytes: a scenario file may be at most 1 MiB (%d bytes)", name, fi.Size(), MaxScenarioSize)
	}
	src, err := io.ReadAll(io.LimitReader(f, MaxScenarioSize+1))
	if err != nil {
		return nil, err
	}
	if len(src) > MaxScenarioSize { // it grew while being read
		return nil, fmt.Errorf("%s is over %d bytes: a scenario file may be at most 1 MiB", name, MaxScenarioSize)
	}
	return src, nil
}

// FileKind names what a file that is not a regular file is ("" for a
// regular file).
func FileKind(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return ""
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
