package vault

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/seal"
)

// The views file records when each memory file was read, in the repository's
// local state folder, never in the tree, so it never syncs and never makes a
// commit. Each record is a time (Unix seconds, 8 bytes big-endian) and what
// was read: the memory path in a plain vault, and in a sealed one "#" and the
// path's ID under the vault key (seal.Key.PathID): the host of a sealed vault
// sees no name, and neither does a thief of its folder. A later record wins.
//
// Version 3 is framed by gitlog's record files. Versions 1 and 2 were text, a
// line "<unix seconds>\t<what was read>" each, version 2 under the header line
// "memvault views v2" (version 1 held plain paths only, under "memvault views
// v1" or no header at all); they are read, and written again in version 3 by
// the first view recorded, paths in the clear of a sealed vault's version 1
// replaced by their IDs. A file of a newer version is neither appended to nor
// rewritten.
var viewsFile = gitlog.RecordFile{Name: "views", Kind: "views", Version: 3, Tag: "MVVW"}

const viewsFamily = "memvault views v"

// oldViews tells which older version the views file that starts with head is
// of: 1 or 2, or 0 when it is none of them (empty, of version 3 or newer).
func oldViews(head []byte) int {
	switch {
	case len(head) == 0:
		return 0
	case bytes.HasPrefix(head, []byte(viewsFamily+"1\n")):
		return 1
	case bytes.HasPrefix(head, []byte(viewsFamily+"2\n")):
		return 2
	case bytes.HasPrefix(head, []byte(viewsFamily)) || bytes.HasPrefix([]byte(viewsFamily), head):
		return 0
	}
	return 1 // no header: the first version
}

// viewEntry is what the views file records of a read of cp: cp in the plain
// format (k nil), its ID under k in the sealed one.
func viewEntry(k *seal.Key, cp string) string {
	if k == nil {
		return cp
	}
	return "#" + k.PathID(cp)
}

func viewRecord(t time.Time, entry string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(t.Unix())), entry...)
}

// viewsCompactAt is the size past which Expire rewrites the views file with
// one record per path.
const viewsCompactAt = 1 << 20

// RecordView notes that memory file p was read now, for Expire. It appends one
// short record to a local file and does not sync it: a view lost in a crash only
// makes a file look older. In a plain vault the path is recorded (it is the
// tree's name, which the host sees too); in a sealed one only its ID under
// the vault key. Nothing of the content is recorded.
func (v *Vault) RecordView(p string) error {
	cp, err := CleanPath(p)
	if err != nil {
		return err
	}
	k, err := v.currentKey()
	if err != nil {
		return fmt.Errorf("vault: record view: %w", err)
	}
	rec := viewRecord(v.opts.Now(), viewEntry(k, cp))
	err = v.repo.AppendRecords(viewsFile, rec)
	if errors.Is(err, gitlog.ErrNewerFormat) && v.oldViewsFile() {
		// Of version 1 or 2: written again in this version first.
		if err = v.rewriteViews(k); err == nil {
			err = v.repo.AppendRecords(viewsFile, rec)
		}
	}
	if errors.Is(err, gitlog.ErrNewerFormat) {
		return nil // a newer memvault's file: a view not recorded only makes a file look older
	}
	if err != nil {
		return fmt.Errorf("vault: record view: %w", err)
	}
	return nil
}

// oldViewsFile tells whether the views file is of version 1 or 2.
func (v *Vault) oldViewsFile() bool {
	f, err := os.Open(filepath.Join(v.repo.StateDir(), viewsFile.Name))
	if err != nil {
		return false
	}
	defer f.Close()
	var head [len(viewsFamily) + 2]byte
	n, _ := f.ReadAt(head[:], 0)
	return oldViews(head[:n]) != 0
}

// rewriteViews writes the views file again in version 3, each path recorded
// in the clear replaced by its ID under k when k is set.
func (v *Vault) rewriteViews(k *seal.Key) error {
	views, _, err := v.lastViews()
	if err != nil {
		return err
	}
	out := make(map[string]time.Time, len(views))
	for e, t := range views {
		if k != nil && !strings.HasPrefix(e, "#") {
			e = viewEntry(k, e)
		}
		if t.After(out[e]) {
			out[e] = t
		}
	}
	return v.writeViews(out)
}

// lastViews reads the views file, of any version: the last view of each entry
// (a path, or "#" and a path's ID), and the file's size.
func (v *Vault) lastViews() (map[string]time.Time, int64, error) {
	data, err := os.ReadFile(filepath.Join(v.repo.StateDir(), viewsFile.Name))
	if os.IsNotExist(err) {
		return map[string]time.Time{}, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("vault: views: %w", err)
	}
	if oldViews(data) != 0 {
		return parseOldViews(data), int64(len(data)), nil
	}
	recs, err := v.repo.ReadRecords(viewsFile)
	if err != nil {
		return nil, 0, fmt.Errorf("vault: views: %w", err)
	}
	views := map[string]time.Time{}
	for _, rec := range recs {
		if len(rec) < 8 {
			continue
		}
		t := time.Unix(int64(binary.BigEndian.Uint64(rec)), 0)
		if p := string(rec[8:]); t.After(views[p]) {
			views[p] = t
		}
	}
	return views, int64(len(data)), nil
}

// parseOldViews reads the lines of a views file of version 1 or 2.
func parseOldViews(data []byte) map[string]time.Time {
	views := map[string]time.Time{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<16)
	for sc.Scan() {
		sec, p, ok := strings.Cut(sc.Text(), "\t")
		n, err := strconv.ParseInt(sec, 10, 64)
		if !ok || err != nil {
			continue // the header, or a torn last line after a crash
		}
		if t := time.Unix(n, 0); t.After(views[p]) {
			views[p] = t
		}
	}
	return views
}

// compactViews rewrites the views file with one record per current path. It
// runs under the writer lock; a view recorded meanwhile by another process
// may be lost, which only makes its file look older.
func (v *Vault) compactViews(views map[string]time.Time, keep map[string]bool) error {
	kept := map[string]time.Time{}
	for e, t := range views {
		if keep[e] {
			kept[e] = t
		}
	}
	return v.writeViews(kept)
}

// writeViews writes the views file whole, in version 3, durably.
func (v *Vault) writeViews(views map[string]time.Time) error {
	recs := make([][]byte, 0, len(views))
	for e, t := range views {
		recs = append(recs, viewRecord(t, e))
	}
	if err := v.repo.ReplaceRecords(viewsFile, recs); err != nil {
		return fmt.Errorf("vault: compact views: %w", err)
	}
	return nil
}

// UnusedFile is a memory file Expire chose: its path and when it was last viewed
// or changed (zero if never, as far as the history since the cutoff tells).
type UnusedFile struct {
	Path     string
	LastUsed time.Time
}

// Expire deletes, in one commit (so one revert brings them all back), every
// memory file neither viewed (see RecordView) nor changed since
// now - unusedFor. With dryRun it only returns what it would delete. It returns
// the files, sorted by path, and the commit made ("" when none).
func (v *Vault) Expire(ctx context.Context, unusedFor time.Duration, dryRun bool) ([]UnusedFile, string, error) {
	if unusedFor <= 0 {
		return nil, "", fmt.Errorf("vault: expire: the unused period must be positive")
	}
	cutoff := v.opts.Now().Add(-unusedFor)
	var out []UnusedFile
	meta := Meta{Command: "expire"}
	_, err := v.updateWith(ctx, meta, func(tx *Tx) error {
		// Paths only: the tree says what files there are, no blob is read.
		var refs []fileRef
		if e, err := v.repo.Lookup(tx.root, memDir); err == nil {
			if refs, err = v.openedFilesUnder(tx.names, memDir, e.Hash); err != nil {
				return err
			}
		}
		files := make(map[string]bool, len(refs))
		for _, f := range refs {
			files[memPath(f.path)] = true
		}
		views, size, err := v.lastViews()
		if err != nil {
			return err
		}
		// A sealed vault's views name each path by its ID under the key of
		// their time: every key this vault holds is tried.
		ks := v.seals.knownKeys(tx.names.key())
		last := map[string]time.Time{}
		keep := map[string]bool{}
		for p := range files {
			last[p] = views[p]
			keep[p] = true
			for _, k := range ks {
				e := viewEntry(k, p)
				keep[e] = true
				if views[e].After(last[p]) {
					last[p] = views[e]
				}
			}
		}
		if err := v.lastChanges(ctx, cutoff, last); err != nil {
			return err
		}
		for p := range files {
			if last[p].Before(cutoff) {
				out = append(out, UnusedFile{Path: p, LastUsed: last[p]})
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
		if size > viewsCompactAt && !dryRun {
			if err := v.compactViews(views, keep); err != nil {
				return err
			}
		}
		if dryRun {
			return nil
		}
		for _, u := range out {
			if err := tx.Remove(u.Path); err != nil {
				return err
			}
		}
		return nil
	}, func(subject *string, trailers *[]trailer) {
		// The commit names every file it deleted, so its log line and show say
		// what one revert brings back.
		if len(out) == 0 {
			return
		}
		*subject = fmt.Sprintf("expire %d files unused since %s", len(out), cutoff.UTC().Format(time.DateOnly))
		if len(out) == 1 {
			*subject = "expire " + out[0].Path
		}
		for _, u := range out {
			*trailers = append(*trailers, trailer{trDeleted, u.Path})
		}
	})
	if err != nil || dryRun || len(out) == 0 {
		return out, "", err
	}
	s, err := v.Snapshot(ctx)
	if err != nil {
		return out, "", err
	}
	return out, s.Commit(), nil
}

// reencryptions are the commands whose commits change every file's
// ciphertext and no plaintext: they use nothing.
var reencryptions = map[string]bool{"rekey": true, "recipients-add": true, "recipients-remove": true, "recipients-change": true,
	"members-add": true, "members-remove": true, "seal": true}

// lastChanges raises last[p] to the time of the latest commit at or after
// cutoff that changed memory file p, for each p in last. Every path a commit
// touched counts, compared with its first parent: a memory command's, and
// each file an import, a restore, a revert, a rollback, a merge or a rename
// of a directory wrote or moved, not only the one its trailers name.
func (v *Vault) lastChanges(ctx context.Context, cutoff time.Time, last map[string]time.Time) error {
	head, err := v.repo.Head()
	if err != nil {
		return fmt.Errorf("vault: expire: %w", err)
	}
	return eachCommit(ctx, v.repo, head, func(c *gitlog.Commit) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := v.record(c)
		if err != nil {
			return fmt.Errorf("vault: expire: %w", err)
		}
		if r.Time.Before(cutoff) || reencryptions[r.Command] {
			return nil
		}
		var parent gitlog.Hash
		if len(c.ParentHashes) > 0 {
			pt, err := v.repo.RootTree(c.ParentHashes[0])
			if err != nil {
				return fmt.Errorf("vault: expire: %w", err)
			}
			parent = pt
		}
		tcs, err := v.diffOpened(parent, c.TreeHash, "")
		if err != nil {
			return fmt.Errorf("vault: expire: %w", err)
		}
		for _, tc := range tcs {
			p := memPath(tc.Path)
			if t, ok := last[p]; ok && r.Time.After(t) {
				last[p] = r.Time
			}
		}
		return nil
	})
}
