package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/escape"
)

func newExportCommand(g *globalOptions) *cobra.Command {
	var at, from string
	c := &cobra.Command{
		Use:   "export DIR|- [--at REV] [--from /memories/SUB]",
		Short: "Write every memory file out as plaintext, to a folder or a tar stream",
		Long: `Export decrypts every memory file of the vault and writes it out in PLAINTEXT:
anyone who can read what it writes can read the memory. It says so on stderr.

DIR must not exist or be empty. Each file /memories/P is written to DIR/memories/P,
so DIR is laid out as the Anthropic SDKs' local-filesystem memory tool keeps its base
folder, and 'memvault import DIR' brings the same files back, byte for byte. Files
are made readable by you alone (0600), folders 0700.

With "-" instead of DIR, export writes a tar stream to stdout with the same paths
(memories/P) and modes.

With --at, the files as they were at revision REV: a commit hash (or at least its first
4 digits), main, a checkpoint name, or any of these followed by ~N.

With --from, only the files under the memory folder SUB, each SUB/P written to DIR/P:
the layout of a Claude Code project memory folder (MEMORY.md and the files beside
it) that 'memvault import FOLDER --to SUB' brought in, byte for byte.

An entry of the vault that is no memory file memvault can read (put there by hand
with git, or damaged) does not stop the export: every other file is written, stderr
names each entry left out, and the exit status is 1, so a script does not take the
partial export for a whole one.`,
		Example: `  memvault export ./memory-backup
  memvault export - | tar -tvf -
  memvault export ./before --at main~5
  memvault export ./claude-memory --from /memories/claude-code`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, args []string) error {
			if from != "" {
				p, err := memoryPath(c, from)
				if err != nil {
					return err
				}
				from = p
			}
			return runExport(c.Context(), g, args[0], at, from, c.OutOrStdout(), c.ErrOrStderr())
		},
	}
	c.Flags().StringVar(&at, "at", "", "export the files as they were at revision `REV`")
	c.Flags().StringVar(&from, "from", "", "export only the memory folder `SUB`, its files at the top of DIR")
	return c
}

// exportSink receives the files of an export, in byte order of their paths.
type exportSink interface {
	dir(rel string) error
	file(rel string, data []byte) error
	close() error
}

func runExport(ctx context.Context, g *globalOptions, dest, at, from string, stdout, stderr io.Writer) (err error) {
	if dest == "-" && isTerminal(stdout) {
		// A tar stream on a screen is noise that shows the plaintext, and can
		// drive the terminal: refused before anything is decrypted, as tar does.
		return &usageError{cmd: "memvault export", err: errors.New("refusing to write a tar stream " +
			"to a terminal: redirect stdout to a file or a pipe (memvault export - > memory.tar), " +
			"or give a folder instead of -")}
	}
	v, err := g.open(ctx)
	if err != nil {
		return err
	}
	defer closeVault(v, &err)
	snap, err := v.Snapshot(ctx)
	if at != "" {
		snap, err = v.SnapshotAt(ctx, at)
	}
	if err != nil {
		return err
	}
	files, bad, err := snap.ReadableFiles(ctx)
	if err != nil {
		return err
	}
	if from != "" {
		outside := func(p string) bool { return p != from && !strings.HasPrefix(p, from+"/") }
		files = slices.DeleteFunc(files, outside)
		bad = slices.DeleteFunc(bad, func(e vault.EntryError) bool { return outside(e.Path) })
		if len(files) == 0 && len(bad) == 0 {
			return fmt.Errorf("export --from %s: %w", escape.Name(from), errNoMemory)
		}
	}
	var sink exportSink
	where := "stdout, as a tar stream"
	if dest == "-" {
		sink = &tarSink{tw: tar.NewWriter(stdout), now: time.Now()}
	} else {
		if sink, err = newDirSink(dest); err != nil {
			return err
		}
		where = dest
	}
	fmt.Fprintf(stderr, "memvault: export: writing %d memory files as PLAINTEXT to %s; "+
		"anyone who can read them there can read your memory\n", len(files), where)
	unread, err := exportFiles(ctx, snap, files, from, sink)
	if err != nil {
		_ = sink.close()
		return err
	}
	if err := sink.close(); err != nil {
		return err
	}
	// Every file that reads is out; the status says the export is not whole,
	// so a script does not take it for a backup of everything.
	bad = append(bad, unread...)
	slices.SortFunc(bad, func(a, b vault.EntryError) int { return strings.Compare(a.Path, b.Path) })
	writeBadEntries(stderr, "export: incomplete", "not exported", bad)
	if len(bad) > 0 {
		return errLeftOut
	}
	return nil
}

// exportFiles decrypts each file and hands it to sink, creating its folders first:
// /memories/P as memories/P, or with from (a memory folder) from/P as P. A file
// that is no memory file memvault can read is left out and returned.
func exportFiles(ctx context.Context, snap *vault.Snapshot, files []string, from string, sink exportSink) ([]vault.EntryError, error) {
	var bad []vault.EntryError
	made := map[string]bool{".": true}
	for _, p := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// A tree from a remote may be crafted: only a path the memory tool accepts leaves.
		if clean, err := vault.CleanPath(p); err != nil || clean != p {
			return nil, fmt.Errorf("export %q: not a valid memory path; stopped there", p)
		}
		rel := strings.TrimPrefix(p, "/")
		if from != "" {
			rel = strings.TrimPrefix(p, from+"/")
		}
		data, err := snap.ReadFile(ctx, p)
		var ee *vault.EntryError
		if errors.As(err, &ee) {
			bad = append(bad, *ee)
			continue
		} else if err != nil {
			return nil, err
		}
		if err := mkdirs(sink, path.Dir(rel), made); err != nil {
			return nil, err
		}
		if err := sink.file(rel, data); err != nil {
			return nil, err
		}
	}
	return bad, nil
}

// mkdirs has sink make the folder d and those above it not made yet, outermost first.
func mkdirs(sink exportSink, d string, made map[string]bool) error {
	if made[d] {
		return nil
	}
	if err := mkdirs(sink, path.Dir(d), made); err != nil {
		return err
	}
	made[d] = true
	return sink.dir(d)
}

// dirSink writes an export into a folder that was empty, through an os.Root so no
// name can lead outside it.
type dirSink struct {
	name string
	root *os.Root
}

func newDirSink(dir string) (*dirSink, error) {
	switch es, err := os.ReadDir(dir); {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
	case err != nil:
		return nil, fmt.Errorf("export: %w", err)
	case len(es) > 0:
		return nil, fmt.Errorf("export: %s is not empty; name a new or empty folder", dir)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	return &dirSink{name: dir, root: r}, nil
}

func (s *dirSink) dir(rel string) error {
	if err := s.root.Mkdir(rel, 0o700); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

func (s *dirSink) file(rel string, data []byte) error {
	f, err := s.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("export: write %s: %w", rel, err)
	}
	return nil
}

func (s *dirSink) close() error { return s.root.Close() }

// tarSink writes an export as a tar stream.
type tarSink struct {
	tw  *tar.Writer
	now time.Time
}

func (s *tarSink) dir(rel string) error {
	return s.header(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: 0o700})
}

func (s *tarSink) file(rel string, data []byte) error {
	if err := s.header(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o600, Size: int64(len(data))}); err != nil {
		return err
	}
	if _, err := s.tw.Write(data); err != nil {
		return fmt.Errorf("export: write: %w", err)
	}
	return nil
}

func (s *tarSink) header(h *tar.Header) error {
	h.ModTime = s.now
	h.Format = tar.FormatPAX
	if err := s.tw.WriteHeader(h); err != nil {
		return fmt.Errorf("export: write: %w", err)
	}
	return nil
}

func (s *tarSink) close() error {
	if err := s.tw.Close(); err != nil {
		return fmt.Errorf("export: write: %w", err)
	}
	return nil
}
