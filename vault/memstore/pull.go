package memstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/memvault/memvault/vault"
	"github.com/memvault/memvault/vault/internal/textdiff"
)

// saveEvery is how many applied versions a pull makes durable at once: a
// pull stopped in between applies those again, which changes nothing.
const saveEvery = 200

// fetchWindow is about how many versions' contents a pull holds at once
// (each at most 100 kB).
const fetchWindow = 200

// window returns the end of the window of versions that starts at vs[start]:
// whole seconds of them (the API filters by whole seconds), as many as keep
// it within fetchWindow versions, and at least one second.
func window(vs []Version, start int) int {
	end := start
	for end < len(vs) {
		sec := vs[end].Time.Truncate(time.Second)
		next := end
		for next < len(vs) && vs[next].Time.Truncate(time.Second).Equal(sec) {
			next++
		}
		if end > start && next-start > fetchWindow {
			break
		}
		end = next
	}
	return end
}

// hasContent tells whether v has content to fetch: deleted and redacted
// versions have none.
func hasContent(v Version) bool { return v.Op != "deleted" && !v.Redacted }

// fetch fills in the contents of vs, a window of at most fetchWindow
// versions, with one listing of their seconds.
func (p *puller) fetch(ctx context.Context, vs []Version) error {
	want := map[string]bool{}
	for _, v := range vs {
		if hasContent(v) {
			want[v.ID] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	from := vs[0].Time.Truncate(time.Second)
	to := vs[len(vs)-1].Time.Truncate(time.Second).Add(time.Second)
	got, err := p.c.Contents(ctx, from, to, want)
	if err != nil {
		return err
	}
	for i := range vs {
		if !want[vs[i].ID] {
			continue
		}
		c, ok := got[vs[i].ID]
		if !ok {
			return fmt.Errorf("memory store %s: version %s was listed, but its content was not returned", p.id, vs[i].ID)
		}
		vs[i].Content = c
	}
	return nil
}

// pull applies the store's versions since the cursor, one commit each.
func (s *syncer) pull(ctx context.Context) error {
	vs, err := s.c.Versions(ctx, s.st.After)
	if err != nil {
		return err
	}
	var todo []Version
	for _, v := range vs {
		if !s.st.applied(v) {
			todo = append(todo, v)
		}
	}
	if len(todo) == 0 {
		return s.st.save(s.v.Dir())
	}
	// Only a pull with something to apply reads the vault's files and its
	// recent history: a sync every few seconds that finds nothing costs one
	// listing.
	p := &puller{syncer: s, seen: map[string][]byte{}}
	if err := p.index(ctx); err != nil {
		return err
	}
	replayed, err := p.replayed(ctx)
	if err != nil {
		return err
	}
	s.say("pulling %d versions from memory store %s", len(todo), s.id)
	for start := 0; start < len(todo); {
		end := window(todo, start)
		if err := p.applyWindow(ctx, todo, start, end, replayed); err != nil {
			s.st.save(s.v.Dir()) // what was applied stays applied
			return err
		}
		start = end
	}
	return s.st.save(s.v.Dir())
}

// applyWindow applies todo[start:end], a window: it holds the window's
// contents at once, or one version's when a second holds more than a window
// (each then fetched on its own), and lets each go once applied.
func (p *puller) applyWindow(ctx context.Context, todo []Version, start, end int, replayed map[string]bool) error {
	dense := end-start > fetchWindow
	if !dense {
		if err := p.fetch(ctx, todo[start:end]); err != nil {
			return err
		}
	}
	for i := start; i < end; i++ {
		if dense && hasContent(todo[i]) {
			c, err := p.c.Content(ctx, todo[i].ID)
			if err != nil {
				return err
			}
			todo[i].Content = c
		}
		v := todo[i]
		if replayed[v.ID] {
			p.settleReplayed(v)
		} else if err := p.apply(ctx, v); err != nil {
			if !refused(err) {
				return fmt.Errorf("memory store %s: version %s: %w", p.id, v.ID, err)
			}
			p.setAside(v, err)
		}
		todo[i].Content = ""
		p.st.advance(v)
		if (i+1)%saveEvery == 0 {
			if err := p.st.save(p.v.Dir()); err != nil {
				return err
			}
		}
		if (i+1)%500 == 0 && i+1 < len(todo) {
			p.say("  %d of %d versions", i+1, len(todo))
		}
	}
	return nil
}

// refused tells whether err is the vault's refusal of one version's path or
// content, which no later sync would change: that version is set aside.
// Other errors (the disk, the network) stop the pull, to go on later.
func refused(err error) bool {
	var pe *vault.PathError
	return errors.As(err, &pe) || errors.Is(err, errStorePath) || errors.Is(err, vault.ErrTooLarge) ||
		errors.Is(err, vault.ErrNotDir) || errors.Is(err, vault.ErrIsDir)
}

// maxSetAside bounds the versions the state names as set aside: the newest.
const maxSetAside = 1000

// setAside passes over version v, which the vault refused: the sync goes on
// past it, now and later, and says which and why. A version that once
// stopped every later sync for good: its path held "..".
func (p *puller) setAside(v Version, why error) {
	p.res.SetAside = append(p.res.SetAside, v.ID+": "+why.Error())
	p.say("version %s set aside: %v", v.ID, why)
	p.st.SetAside = append(p.st.SetAside, v.ID)
	if n := len(p.st.SetAside); n > maxSetAside {
		p.st.SetAside = p.st.SetAside[n-maxSetAside:]
	}
}

// replayed returns the versions of this store that the vault's recent commits
// replay: a pull killed before it saved its cursor made them, and applying
// them again would merge a version with its own future.
func (p *puller) replayed(ctx context.Context) (map[string]bool, error) {
	log, err := p.v.Log(ctx, vault.LogOptions{Limit: 4 * saveEvery})
	if err != nil {
		return nil, err
	}
	prefix := Scheme + p.id + " "
	out := map[string]bool{}
	for _, r := range log {
		if id, ok := strings.CutPrefix(r.Origin, prefix); ok {
			out[id] = true
		}
	}
	return out, nil
}

// settleReplayed records a version the vault replayed already as synced.
func (p *puller) settleReplayed(v Version) {
	if v.Redacted {
		return
	}
	if v.Op == "deleted" {
		p.st.set(v.MemoryID, "", "")
		delete(p.seen, v.MemoryID)
		return
	}
	if to, err := vaultPath(v.Path); err == nil {
		p.settle(v.MemoryID, to, []byte(v.Content))
	}
}

// puller applies versions to the vault.
type puller struct {
	*syncer
	local map[string]string // pathKey -> vault path, of the files the vault holds
	seen  map[string][]byte // memory id -> its content as of the last version applied
	base  *vault.Snapshot   // the vault when the store last matched it, or nil
}

func (p *puller) index(ctx context.Context) error {
	snap, err := p.v.Snapshot(ctx)
	if err != nil {
		return err
	}
	files, err := snap.Files(ctx)
	if err != nil {
		return err
	}
	p.local = make(map[string]string, len(files))
	for _, f := range files {
		p.local[pathKey(f)] = f
	}
	if p.st.Commit != "" {
		p.base, _ = p.v.SnapshotAt(ctx, p.st.Commit) // gone (rolled back past): merges then start from nothing
	}
	return nil
}

// apply makes version v one commit, or none when the vault holds it already.
func (p *puller) apply(ctx context.Context, v Version) error {
	known, wasSynced := p.st.Memories[v.MemoryID]
	old := ""
	if wasSynced {
		old = p.local[known.Path]
	}
	if v.Redacted {
		p.res.Redacted = append(p.res.Redacted, v.ID)
		p.say("version %s was redacted in the store: its content is not fetched", v.ID)
		if v.Op == "deleted" && old != "" {
			return p.remove(ctx, v, old, known)
		}
		if wasSynced {
			p.st.Memories[v.MemoryID] = synced{Path: known.Path} // its content there is unknown now
		}
		return nil
	}
	to, err := vaultPath(v.Path)
	if err != nil {
		return err
	}
	if v.Op == "deleted" {
		if old == "" {
			old = to
		}
		return p.remove(ctx, v, old, known)
	}
	from := old
	if from == "" {
		from = to
	}
	ours, err := p.read(ctx, from)
	if err != nil {
		return err
	}
	theirs := []byte(v.Content)
	content, conflicts := theirs, 0
	switch {
	case ours == nil, wasSynced && contentSHA(ours) == known.SHA:
		// Unchanged here since the last sync, or not here: take the store's.
	default:
		content, conflicts = textdiff.Merge(p.baseOf(ctx, v.MemoryID, from, known), ours, theirs, p.labels(v))
	}
	if ours != nil && from == to && string(ours) == string(content) {
		p.settle(v.MemoryID, to, theirs)
		return nil // the vault holds it already: a version applied before a stop
	}
	err = p.v.Update(ctx, p.meta(v), func(tx *vault.Tx) error {
		if from != to && ours != nil {
			if err := tx.Remove(from); err != nil {
				return err
			}
		}
		return tx.WriteFile(ctx, to, content)
	})
	if err != nil {
		return err
	}
	if conflicts > 0 {
		p.res.Conflicts = append(p.res.Conflicts, to)
	}
	p.res.Pulled++
	if from != to {
		delete(p.local, pathKey(from))
	}
	p.local[pathKey(to)] = to
	p.settle(v.MemoryID, to, theirs)
	return nil
}

// remove applies a deletion made in the store to the file at path: gone
// when unchanged here since the last sync, kept (to be created again by the
// push) when changed.
func (p *puller) remove(ctx context.Context, v Version, path string, known synced) error {
	p.st.set(v.MemoryID, "", "")
	delete(p.seen, v.MemoryID)
	ours, err := p.read(ctx, path)
	if err != nil || ours == nil {
		return err
	}
	if known.SHA != "" && contentSHA(ours) != known.SHA {
		p.say("%s was deleted in the store and changed here: kept", path)
		return nil
	}
	err = p.v.Update(ctx, p.meta(v), func(tx *vault.Tx) error { return tx.Remove(path) })
	if err != nil {
		return err
	}
	p.res.Pulled++
	delete(p.local, pathKey(path))
	return nil
}

// settle records that the store holds content for memory id at path.
func (p *puller) settle(id, path string, content []byte) {
	p.st.set(id, path, contentSHA(content))
	p.seen[id] = content
}

// read returns the vault's content of path, nil when there is none.
func (p *puller) read(ctx context.Context, path string) ([]byte, error) {
	snap, err := p.v.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	data, err := snap.ReadFile(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// baseOf is the content both sides last agreed on for a memory: the store's
// content as of the version before, whose SHA the state keeps. Without it, a
// merge starts from nothing, and every difference is a conflict: nothing is lost.
func (p *puller) baseOf(ctx context.Context, id, path string, known synced) []byte {
	if c, ok := p.seen[id]; ok {
		return c
	}
	if p.base != nil && known.SHA != "" {
		if c, err := p.base.ReadFile(ctx, path); err == nil && contentSHA(c) == known.SHA {
			return c
		}
	}
	return nil
}

func (p *puller) labels(v Version) textdiff.Labels {
	host := p.opts.Host
	if host == "" {
		host = "this vault"
	}
	return textdiff.Labels{
		Ours:   "ours (" + host + ")",
		Base:   "base",
		Theirs: fmt.Sprintf("theirs (memory store %s, %s)", p.id, v.Time.UTC().Format("2006-01-02T15:04:05Z")),
	}
}

// meta is the commit's description of a store version.
func (p *puller) meta(v Version) vault.Meta {
	agent := v.Actor
	if agent == "" {
		agent = "memory store"
	}
	return vault.Meta{
		Command: "store " + v.Op,
		Agent:   agent,
		Session: v.Session,
		Origin:  Scheme + p.id + " " + v.ID,
		When:    v.Time,
	}
}
