package vault

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/memvault/memvault/gitlog"
)

// ImportFile is one file an import brings in: its memory path and plaintext.
type ImportFile struct {
	Path string
	Data []byte

	// read, when set, reads Data, which is nil until then: a replayed source's
	// file, read when it is judged and again when it is written, so that an
	// import holds the contents of a few files at a time, not of all of them
	// (one blob named 3,000 times once took 6 GB). source is its blob.
	read   func() ([]byte, error)
	source gitlog.Hash
	// screened says that Screen changed the data read, so it is screened
	// again when read again; data it let pass as it was is not scanned twice,
	// only checked against sum, what was judged (the source's folder may be
	// someone else's, and its packs swapped between the two reads).
	screened bool
	sum      [sha256.Size]byte
}

// ImportOptions say how Import treats what is already in the vault and how its
// commit reads.
type ImportOptions struct {
	// Overwrite replaces a file whose content differs; without it such a file is
	// kept as it is and listed in ImportResult.Kept.
	Overwrite bool
	// Delete lists memory files to remove in the same commit (a replayed source
	// commit that deleted them). A path that names nothing is ignored.
	Delete []string
	// DryRun works out the result without committing anything.
	DryRun bool
	// Meta describes the commit; Command defaults to "import".
	Meta Meta
	// Author and When, when set, are the commit's author and time (a replayed
	// source commit's); otherwise the agent of Meta, now.
	Author string
	When   time.Time
	// SourceCommit, when set, is recorded in the Import-Commit trailer, so a
	// re-run of a history replay knows which commits it has already brought in.
	SourceCommit string
	// Progress, when set, is called as files are encrypted.
	Progress func(done, total int)
	// Screen, when set, sees each file before it is planned and returns the
	// file to write (its Data possibly changed), or why it is left out (skip),
	// and what to say of a file written as it returned it (warn): the caller's
	// secret policy, which the memory tool applies to what an agent writes.
	Screen func(ImportFile) (f ImportFile, skip, warn string)

	// replay, for a replayed source commit after the first, is what the
	// source held at the commit before (each path's blob): without Overwrite,
	// a file is replaced or deleted only while the vault holds exactly that,
	// so the import touches only what it wrote itself.
	replay map[string]gitlog.Hash
	// written counts the bytes of files an import run has written so far, over
	// the commits of a history replay; nil for a run of one commit.
	written *int64
}

// ImportSkip is a file an import left out, and why.
type ImportSkip struct {
	Path   string
	Reason string
}

// ImportResult says what Import did, or with DryRun what it would do.
type ImportResult struct {
	Commit    string   // "" when nothing changed
	Added     []string // new files
	Replaced  []string // files whose content the import replaced (Overwrite)
	Deleted   []string // files Delete removed
	Unchanged int      // files already there with the same content
	Kept      []string // files there with other content, left as they were
	Skipped   []ImportSkip
	Warnings  []ImportSkip // files written with a warning of Screen's
}

// Changed reports whether the import changes the vault.
func (r ImportResult) Changed() bool {
	return len(r.Added)+len(r.Replaced)+len(r.Deleted) > 0
}

// Trailers of an import commit.
const (
	trImported     = "Imported-Files"
	trImportCommit = "Import-Commit"
)

// DefaultMaxImport is how many bytes of files one import run may write when
// the vault sets no maxVaultSize. A vault's size has no default limit, but an
// import is where a few kilobytes can stand for gigabytes (a source repository
// that names one blob thousands of times, or whose commits add and delete the
// same big files), and memory is kilobytes to megabytes: past this, the user
// says how big the vault may grow, and the import follows that.
const DefaultMaxImport = 256 << 20

// maxImport returns how many bytes of files one import run may write: the
// vault's total size limit, or DefaultMaxImport.
func (v *Vault) maxImport() int64 {
	if v.limits.MaxVaultSize > 0 {
		return v.limits.MaxVaultSize
	}
	return DefaultMaxImport
}

// Import brings files into the vault in one commit: its blobs as one pack,
// each encrypted and written as it comes, then its trees and commit. Every
// path goes through the memory tool's path rules; a file that breaks them, is
// not UTF-8 text, is over the file size limit, or collides with a directory is
// skipped and listed with the reason. A file already there with the same
// content changes nothing, so a re-run of the same import makes no commit. The
// whole import is refused, changing nothing, with an error wrapping
// ErrTooManyFiles or ErrVaultFull, when it would pass the vault's file count
// or total size limits, or write more bytes of files than one import may
// (maxVaultSize, or DefaultMaxImport when the vault sets none), found before
// a byte past that bound is read.
func (v *Vault) Import(ctx context.Context, files []ImportFile, opts ImportOptions) (ImportResult, error) {
	var res ImportResult
	w, err := v.repo.Lock(ctx)
	if err != nil {
		return res, fmt.Errorf("vault: %w", err)
	}
	defer w.Unlock()
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return res, err
	}
	plan, err := v.planImport(ctx, snap, files, opts, &res)
	if err != nil || opts.DryRun || !res.Changed() {
		return res, err
	}
	changes, err := v.encryptImport(ctx, w, snap, plan, opts)
	if err != nil {
		return res, err
	}
	for _, p := range res.Deleted {
		tp, _ := snap.names.treePath(p) // it is in the vault: its path seals
		changes = append(changes, gitlog.Change{Op: gitlog.Delete, Path: tp})
	}
	h, err := v.commitImport(ctx, w, snap.commit, changes, opts, &res)
	if err != nil {
		return res, err
	}
	res.Commit = h.String()
	return res, nil
}

// importData returns f with its data read (when it is read on demand) and
// screened by opts.Screen, or why it is left out. A file read on demand
// comes back with screened set when Screen changed its data.
func importData(ctx context.Context, f ImportFile, opts ImportOptions) (g ImportFile, skip, warn string, err error) {
	if f.read != nil && f.Data == nil {
		data, err := f.read()
		if err != nil {
			if ctx.Err() != nil {
				return f, "", "", ctx.Err()
			}
			return f, "cannot be read: " + err.Error(), "", nil // a crafted object fails alone
		}
		f.Data = data
	}
	if opts.Screen != nil {
		raw := f.Data
		if f, skip, warn = opts.Screen(f); skip != "" {
			return f, skip, "", nil
		}
		f.screened = f.read != nil && !bytes.Equal(raw, f.Data)
	}
	if f.read != nil && !f.screened {
		f.sum = sha256.Sum256(f.Data)
	}
	return f, "", warn, nil
}

// reread reads a planned file read on demand again, for writing: as it was
// planned, screened again only if Screen changed it then.
func (v *Vault) reread(ctx context.Context, f ImportFile, opts ImportOptions) ([]byte, error) {
	var skip string
	if f.screened {
		g, s, _, err := importData(ctx, f, opts)
		if err != nil {
			return nil, err
		}
		f, skip = g, s
	} else {
		data, err := f.read()
		if err != nil {
			return nil, fmt.Errorf("vault: import %s: %w", f.Path, err)
		}
		if sha256.Sum256(data) != f.sum {
			skip = "changed"
		}
		f.Data = data
	}
	if skip != "" || v.importableData(f.Data) != "" {
		return nil, fmt.Errorf("vault: import %s: the source changed while it was imported", f.Path)
	}
	return f.Data, nil
}

// planImport sorts files into res and returns those to write, in path order.
// A file read on demand is read here to be judged, and left unread in the
// plan.
func (v *Vault) planImport(ctx context.Context, snap *Snapshot, files []ImportFile, opts ImportOptions, res *ImportResult) ([]ImportFile, error) {
	incoming := map[string]bool{}
	var ok []ImportFile
	for _, f := range files {
		if reason := importablePath(f.Path); reason != "" {
			res.Skipped = append(res.Skipped, ImportSkip{f.Path, reason})
			continue
		}
		f.Path, _ = CleanPath(f.Path)
		if incoming[f.Path] {
			res.Skipped = append(res.Skipped, ImportSkip{f.Path, "named twice in the import"})
			continue
		}
		incoming[f.Path] = true
		ok = append(ok, f)
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i].Path < ok[j].Path })
	var plan []ImportFile
	var addBytes, writes int64
	var written int64
	if opts.written != nil {
		written = *opts.written
	}
	max := v.maxImport()
	for _, f := range ok {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if reason := parentIn(f.Path, incoming); reason != "" {
			res.Skipped = append(res.Skipped, ImportSkip{f.Path, reason})
			continue
		}
		f, skip, warn, err := importData(ctx, f, opts)
		switch {
		case err != nil:
			return nil, err
		case skip == "":
			skip = v.importableData(f.Data)
		}
		if skip != "" {
			res.Skipped = append(res.Skipped, ImportSkip{f.Path, skip})
			continue
		}
		state, old, err := v.compareExisting(ctx, snap, f)
		switch {
		case err != nil:
			return nil, err
		case state == "":
			res.Added = append(res.Added, f.Path)
			addBytes += int64(len(f.Data))
		case state == "same":
			res.Unchanged++
			continue
		case state == "differs" && !opts.Overwrite && !v.holdsReplayed(ctx, snap, f.Path, opts.replay):
			res.Kept = append(res.Kept, f.Path)
			continue
		case state == "differs":
			res.Replaced = append(res.Replaced, f.Path)
			addBytes += int64(len(f.Data)) - old
		default:
			res.Skipped = append(res.Skipped, ImportSkip{f.Path, state})
			continue
		}
		if warn != "" {
			res.Warnings = append(res.Warnings, ImportSkip{f.Path, warn})
		}
		// Stop before reading past the bound, not after planning it all.
		if writes += int64(len(f.Data)); written+writes > max {
			return nil, fmt.Errorf("vault: the import would write more than %d bytes of files, the most one import may (memvault.maxVaultSize in the vault's config; %d MiB when it sets none); nothing of it imported: %w",
				max, DefaultMaxImport>>20, ErrVaultFull)
		}
		if f.read != nil {
			f.Data = nil // read again when it is written
		}
		plan = append(plan, f)
	}
	for _, p := range opts.Delete {
		cp, err := CleanPath(p)
		if err != nil || incoming[cp] {
			continue
		}
		if k, _ := snap.Stat(cp); k == KindFile && (opts.Overwrite || v.holdsReplayed(ctx, snap, cp, opts.replay)) {
			res.Deleted = append(res.Deleted, cp)
		}
	}
	sort.Strings(res.Deleted)
	if err := v.checkImportLimits(ctx, snap, len(res.Added)-len(res.Deleted), addBytes); err != nil {
		return nil, err
	}
	if opts.written != nil && !opts.DryRun {
		*opts.written += writes
	}
	return plan, nil
}

// holdsReplayed tells whether the vault's file p holds what replay says the
// source had there before: what an earlier replayed commit wrote, unchanged.
func (v *Vault) holdsReplayed(ctx context.Context, snap *Snapshot, p string, replay map[string]gitlog.Hash) bool {
	want, ok := replay[p]
	if !ok {
		return false
	}
	got, err := snap.ReadFile(ctx, p)
	return err == nil && gitlog.BlobHash(got) == want
}

// importablePath returns why p cannot be a memory file's path, or "".
func importablePath(p string) string {
	var pe *PathError
	cp, err := CleanPath(p)
	switch {
	case errors.As(err, &pe):
		return "not a valid memory path: " + pe.Reason
	case err != nil:
		return "not a valid memory path"
	case cp == Root:
		return "not a file"
	}
	return ""
}

// importableData returns why data cannot be a memory file's content, or "".
func (v *Vault) importableData(data []byte) string {
	switch {
	case int64(len(data)) > v.limits.MaxFileSize:
		return fmt.Sprintf("%d bytes, over the file size limit of %d", len(data), v.limits.MaxFileSize)
	case !utf8.Valid(data):
		return "not UTF-8 text"
	}
	return ""
}

// parentIn returns a reason when a folder above p is itself a file of the import.
func parentIn(p string, incoming map[string]bool) string {
	for d := p[:strings.LastIndex(p, "/")]; d != Root; d = d[:strings.LastIndex(d, "/")] {
		if incoming[d] {
			return "a folder of the same name as the imported file " + d
		}
	}
	return ""
}

// compareExisting says what is at f.Path now: "" (nothing), "same", "differs"
// (with the old size), or why f cannot go there.
func (v *Vault) compareExisting(ctx context.Context, snap *Snapshot, f ImportFile) (string, int64, error) {
	tp, err := snap.names.treePath(f.Path)
	if unsealable(err) {
		var pe *PathError
		errors.As(err, &pe)
		return "not a valid memory path: " + pe.Reason, 0, nil
	}
	e, err := v.repo.Lookup(snap.root, tp)
	switch {
	case errors.Is(err, gitlog.ErrNotFound):
		return "", 0, nil
	case errors.Is(err, gitlog.ErrNotDir):
		return "a folder above it is a file in the vault", 0, nil
	case err != nil:
		return "", 0, fmt.Errorf("vault: import %s: %w", f.Path, err)
	case e.IsDir():
		return "a folder of that name is in the vault", 0, nil
	}
	n, err := v.fileSizeIn(snap.names, f.Path, e.Hash)
	if err != nil {
		return "", 0, err
	}
	if n != int64(len(f.Data)) {
		return "differs", n, nil
	}
	old, err := snap.ReadFile(ctx, f.Path)
	if err != nil {
		return "", 0, err
	}
	if bytes.Equal(old, f.Data) {
		return "same", n, nil
	}
	return "differs", n, nil
}

// checkImportLimits refuses an import that would pass the vault's file count or
// total size limits.
func (v *Vault) checkImportLimits(ctx context.Context, snap *Snapshot, addFiles int, addBytes int64) error {
	if v.limits.MaxFiles > 0 && addFiles > 0 {
		n, err := snap.FileCount(ctx)
		if err != nil {
			return err
		}
		if n+addFiles > v.limits.MaxFiles {
			return fmt.Errorf("vault: import: the vault would hold %d files, over its limit of %d (memvault.maxFiles in the vault's config); nothing imported: %w",
				n+addFiles, v.limits.MaxFiles, ErrTooManyFiles)
		}
	}
	if v.limits.MaxVaultSize > 0 && addBytes > 0 {
		u, err := snap.Usage(ctx)
		if err != nil {
			return err
		}
		if u.Bytes+addBytes > v.limits.MaxVaultSize {
			return fmt.Errorf("vault: import: the vault would hold %d bytes, over its limit of %d (memvault.maxVaultSize in the vault's config); nothing imported: %w",
				u.Bytes+addBytes, v.limits.MaxVaultSize, ErrVaultFull)
		}
	}
	return nil
}

// encryptImport encrypts the files of plan on every core and writes each, as
// it is encrypted, into one new pack of blobs, holding a few files at a time;
// it returns the changes that link them, in plan's order. A file read on
// demand is read again here, and must be as it was planned.
func (v *Vault) encryptImport(ctx context.Context, w *gitlog.Writer, snap *Snapshot, plan []ImportFile, opts ImportOptions) ([]gitlog.Change, error) {
	content, err := snap.recipientsContent()
	if err != nil {
		return nil, err
	}
	rs, err := v.keys.parseRecipients(content)
	if err != nil {
		return nil, err
	}
	type sealed struct {
		i   int
		ct  []byte
		err error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan int)
	out := make(chan sealed)
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			for i := range work {
				data, err := plan[i].Data, error(nil)
				if data == nil && plan[i].read != nil {
					data, err = v.reread(ctx, plan[i], opts)
				}
				var ct []byte
				if err == nil {
					ct, err = snap.names.blob(data, rs)
				}
				select {
				case out <- sealed{i, ct, err}:
				case <-ctx.Done():
					return
				}
			}
		})
	}
	go func() {
		defer close(work)
		for i := range plan {
			select {
			case work <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		workers.Wait()
		close(out)
	}()
	bp, err := w.NewBlobPack(ctx, len(plan))
	if err != nil {
		return nil, err
	}
	defer bp.Abort()
	changes := make([]gitlog.Change, len(plan))
	n := 0
	for s := range out {
		if err == nil && s.err != nil {
			err = s.err
		}
		if err == nil {
			var h gitlog.Hash
			h, err = bp.Add(s.ct)
			tp, _ := snap.names.treePath(plan[s.i].Path) // planned: its path seals
			changes[s.i] = gitlog.Change{Op: gitlog.Link, Path: tp, Hash: h}
		}
		if err != nil {
			cancel() // the workers stop; out closes once they have
			continue
		}
		n++
		if opts.Progress != nil {
			opts.Progress(n, len(plan))
		}
	}
	if err == nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		return nil, err
	}
	if err := bp.Finish(); err != nil {
		return nil, fmt.Errorf("vault: import: %w", err)
	}
	return changes, nil
}

// commitImport writes the import's commit as one pack.
func (v *Vault) commitImport(ctx context.Context, w *gitlog.Writer, parent gitlog.Hash, changes []gitlog.Change, opts ImportOptions, res *ImportResult) (gitlog.Hash, error) {
	meta := opts.Meta
	if meta.Command == "" {
		meta.Command = "import"
	}
	n := len(res.Added) + len(res.Replaced)
	subject := fmt.Sprintf("%s %d files", meta.Command, n)
	if n == 1 {
		subject = meta.Command + " " + append(res.Added, res.Replaced...)[0]
	}
	if len(res.Deleted) > 0 {
		subject += fmt.Sprintf(", delete %d", len(res.Deleted))
	}
	trailers := append(metaTrailers(meta, "", ""),
		trailer{trImported, fmt.Sprint(n)}, trailer{trImportCommit, opts.SourceCommit})
	now := v.opts.Now()
	when := opts.When
	if when.IsZero() {
		when = now
	}
	author := firstNonEmptyString(opts.Author, meta.Agent, "memvault")
	sign, err := v.signerFor(parent)
	if err != nil {
		return gitlog.ZeroHash, err
	}
	info := gitlog.CommitInfo{
		Message:   formatMessage(subject, trailers),
		Author:    gitlog.Signature{Name: signatureName(author), Email: "agent@memvault", When: when},
		Committer: gitlog.Signature{Name: "memvault", Email: "memvault@localhost", When: now},
		Sign:      sign,
		Packed:    true,
	}
	if err := v.sealInfo(parent, changes, &info); err != nil {
		return gitlog.ZeroHash, err
	}
	h, err := w.Commit(ctx, parent, changes, info)
	if err != nil {
		return h, fmt.Errorf("vault: commit %s: %w", subject, err)
	}
	return h, nil
}

func firstNonEmptyString(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// importedCommits returns the source commits earlier history replays brought in
// (the Import-Commit trailers of the vault's history).
func (v *Vault) importedCommits(ctx context.Context) (map[string]bool, error) {
	head, err := v.repo.Head()
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	if _, err := v.namesAt(head); err != nil { // a sealed vault's key, known before its messages
		return nil, err
	}
	seen := map[string]bool{}
	err = eachCommit(ctx, v.repo, head, func(c *gitlog.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		msg, err := v.openedMessage(c)
		if err != nil {
			return err
		}
		_, ts := parseMessage(msg)
		for _, t := range ts {
			if t.key == trImportCommit {
				seen[t.value] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vault: %w", err)
	}
	return seen, nil
}
