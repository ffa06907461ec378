package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/cachelab/cachelab/sim"
	"github.com/cachelab/cachelab/sim/scenario"
)

// The files a run writes, checked before it starts. A run can take
// minutes; a page that cannot be written, found only at the end, throws
// that away. Worse, a run must never write over what it reads: the
// scenario file, whether named again, or reached through a symlink or a
// hard link. So before the first step:
//
//	stdout               not the scenario file (cachelab run x.txt >> x.txt)
//	--output html=FILE   writable, not a directory, not marked read-only,
//	                     not the scenario file, not where stdout goes
//	--rewrite            the scenario file is writable and not read-only
//	                     (sim.CheckRewrite)
//
// Files are compared by identity (os.SameFile: device and inode), so
// every name of a file is that file.

// checkOutputs checks every file the run will write against the scenario
// it reads, before the run starts: a usage error (exit 2) if one cannot be
// written or would destroy an input.
func (m *Main) checkOutputs(sc *scenario.Scenario, o *runOptions) error {
	var input fs.FileInfo
	if !sc.Builtin {
		fi, err := os.Stat(sc.File)
		if err != nil {
			return err
		}
		input = fi
	}
	stdout := fileOf(m.Stdout)
	if input != nil && stdout != nil && os.SameFile(input, stdout) {
		return fmt.Errorf("stdout is the scenario file %s: the trace would be written into the scenario it runs", sc.File)
	}
	if o.output.value == "html" {
		if err := checkPageFile(o.htmlFile, input, stdout); err != nil {
			return fmt.Errorf("--output html=%s: %w", o.htmlFile, err)
		}
	}
	if o.rewrite && !sc.Builtin {
		if err := sim.CheckRewrite(sc.File); err != nil {
			return fmt.Errorf("--rewrite: %w", err)
		}
	}
	return nil
}

// fileOf is what a stream writes to when it is a file (a regular file, a
// terminal, a pipe), or nil.
func fileOf(w any) fs.FileInfo {
	f, ok := w.(interface{ Stat() (fs.FileInfo, error) })
	if !ok {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	return fi
}

// checkPageFile says why the page cannot be written to file, or nil.
// input is the scenario file (nil for a built-in one), stdout what stdout
// writes to (nil if not a file; a page sent to stdout's terminal or to
// /dev/null destroys nothing, so only a regular file counts). A file that does not exist yet is
// created and removed again: that is the one sure test that it can be.
func checkPageFile(file string, input, stdout fs.FileInfo) error {
	fi, err := os.Stat(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return probeCreate(file)
	case err != nil:
		return fmt.Errorf("the page cannot be written there: %w", err)
	case fi.IsDir():
		return fmt.Errorf("that is a directory; name the page's file, such as %s/run.html", file)
	case input != nil && os.SameFile(fi, input):
		return errors.New("that is the scenario file this run reads; the page would replace it")
	case stdout != nil && fi.Mode().IsRegular() && os.SameFile(fi, stdout):
		return errors.New("that is where stdout goes; the page and the text trace would overwrite each other")
	case fi.Mode().IsRegular() && fi.Mode().Perm()&0o222 == 0:
		return fmt.Errorf("the file is read-only (mode %04o); cachelab does not write over a file marked read-only", fi.Mode().Perm())
	}
	// Open to write, without truncating (nothing is written yet) and
	// without waiting (a named pipe with no reader fails at once).
	f, err := os.OpenFile(file, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("the page cannot be written there: %w", err)
	}
	return f.Close()
}

// probeCreate creates file, which does not exist, and removes it again.
func probeCreate(file string) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return fmt.Errorf("the page cannot be written there: %w", err)
	}
	f.Close()
	return os.Remove(file)
}
