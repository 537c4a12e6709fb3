package memstore

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The store's limits, checked before a byte is sent.
const (
	maxContent  = 102400 // bytes of a memory's content
	maxPath     = 1024   // bytes of a path
	maxSegments = 20     // segments of a path
)

// op is one change a push sends.
type op struct {
	path    string // vault path
	id      string // the memory, "" for a create
	content []byte // nil for a delete
	want    string // the SHA-256 the store must still hold, "" for none
}

// push sends the vault's changes since the last sync. The error wraps
// ErrPrecondition when the store changed a memory meanwhile.
func (s *syncer) push(ctx context.Context) error {
	snap, err := s.v.Snapshot(ctx)
	if err != nil {
		return err
	}
	files, err := snap.Files(ctx)
	if err != nil {
		return err
	}
	var ops []op
	here := map[string]bool{}
	for _, f := range files {
		content, err := snap.ReadFile(ctx, f)
		if err != nil {
			return err
		}
		if err := fits(f, content); err != nil {
			return fmt.Errorf("memory store %s: %w; nothing was pushed", s.id, err)
		}
		id, m, ok := s.st.at(f)
		if ok {
			here[id] = true
		}
		switch {
		case !ok:
			ops = append(ops, op{path: f, content: content})
		case contentSHA(content) != m.SHA:
			ops = append(ops, op{path: f, id: id, content: content, want: m.SHA})
		}
	}
	for id, m := range s.st.Memories {
		if !here[id] {
			ops = append(ops, op{id: id, want: m.SHA})
		}
	}
	if len(ops) == 0 {
		s.st.Commit = snap.Commit()
		return s.st.save(s.v.Dir())
	}
	s.say("pushing %d changes to memory store %s", len(ops), s.id)
	for i, o := range ops {
		if err := s.send(ctx, o); err != nil {
			if serr := s.st.save(s.v.Dir()); serr != nil {
				return serr
			}
			return err
		}
		s.res.Pushed++
		if (i+1)%saveEvery == 0 {
			if err := s.st.save(s.v.Dir()); err != nil {
				return err
			}
		}
	}
	s.st.Commit = snap.Commit()
	return s.st.save(s.v.Dir())
}

// send makes one change in the store and records it.
func (s *syncer) send(ctx context.Context, o op) error {
	switch {
	case o.content == nil:
		if err := s.c.Remove(ctx, o.id, o.id, o.want); err != nil {
			return err
		}
		s.st.set(o.id, "", "")
	case o.id == "":
		id, ver, err := s.c.Create(ctx, storePath(o.path), string(o.content))
		if err != nil {
			return err
		}
		s.st.set(id, o.path, contentSHA(o.content))
		s.st.Mine = append(s.st.Mine, ver)
	default:
		ver, err := s.c.Update(ctx, o.id, storePath(o.path), string(o.content), o.want)
		if err != nil {
			return err
		}
		s.st.set(o.id, o.path, contentSHA(o.content))
		s.st.Mine = append(s.st.Mine, ver)
	}
	return nil
}

// fits says why the store cannot hold a vault file, naming it.
func fits(p string, content []byte) error {
	sp := storePath(p)
	switch {
	case len(content) > maxContent:
		return fmt.Errorf("%s is %d bytes: a memory store holds at most %d", p, len(content), maxContent)
	case !utf8.Valid(content):
		return fmt.Errorf("%s is not UTF-8 text, which a memory store holds only", p)
	case len(sp) > maxPath:
		return fmt.Errorf("%s: a memory store's path is at most %d bytes", p, maxPath)
	case strings.Count(sp, "/") > maxSegments:
		return fmt.Errorf("%s: a memory store's path has at most %d segments", p, maxSegments)
	case !norm.NFC.IsNormalString(sp):
		return fmt.Errorf("%s: a memory store's path must be in Unicode NFC", p)
	case strings.IndexFunc(sp, func(r rune) bool {
		return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
	}) >= 0:
		return fmt.Errorf("%q: a memory store's path holds no control or format characters", p)
	}
	return nil
}
