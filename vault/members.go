package vault

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/memvault/memvault/gitlog"
	"github.com/memvault/memvault/vault/keys"
)

// Members: the people and machines that share a vault, each a name, reader
// keys (recipients) and signing keys (writers), as the head's tree lists them.
// A key's name is the comment beside it in .memvault/recipients and
// .memvault/writers; a key with none is listed alone. See docs/membership.md.

// Member is one member of the vault.
type Member struct {
	Name    string           // "" for a key with no name
	Readers []keys.Recipient // the keys that read (usually one)
	Writers []keys.Writer    // the keys that sign; none for a member who only reads
	// Since is when the member's first key appeared on main's history (the
	// commit time of the change that added it, by its writer's clock).
	Since time.Time
}

// Members lists the members of the vault at its head: one for each name, and
// one for each key without a name, readers first in the recipients file's
// order.
func (v *Vault) Members(ctx context.Context) ([]Member, error) {
	snap, err := v.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	f, err := snap.recipientsFile()
	if err != nil {
		return nil, err
	}
	set, err := v.writers.writersAt(v.repo, snap.root)
	if err != nil {
		return nil, fmt.Errorf("vault: %s: %w", keys.WritersPath, err)
	}
	var out []Member
	byName := map[string]int{}
	member := func(name string) *Member {
		if name != "" {
			if i, ok := byName[name]; ok {
				return &out[i]
			}
			byName[name] = len(out)
		}
		out = append(out, Member{Name: name})
		return &out[len(out)-1]
	}
	for _, e := range f.Entries {
		m := member(e.Comment)
		m.Readers = append(m.Readers, e.Recipient)
	}
	for _, w := range set.writers {
		m := member(w.Comment)
		m.Writers = append(m.Writers, w)
	}
	if err := v.membersSince(ctx, snap.commit, out); err != nil {
		return nil, err
	}
	return out, nil
}

// membersSince sets each member's Since: walking main's first-parent history
// back from head, the oldest commit since which one of its keys is listed
// without a break.
func (v *Vault) membersSince(ctx context.Context, head gitlog.Hash, ms []Member) error {
	present := func(root gitlog.Hash, m *Member) bool {
		snap := &Snapshot{v: v, root: root}
		if f, err := snap.recipientsFile(); err == nil {
			for _, r := range m.Readers {
				if f.Index(r.Key) >= 0 {
					return true
				}
			}
		}
		if set, err := v.writers.writersAt(v.repo, root); err == nil {
			for _, w := range m.Writers {
				if _, ok := set.find(w.Public); ok {
					return true
				}
			}
		}
		return false
	}
	open := make([]bool, len(ms))
	for i := range open {
		open[i] = true
	}
	var lastMeta gitlog.Hash
	for h := head; !h.IsZero(); {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := v.repo.ReadCommit(h)
		if err != nil {
			return fmt.Errorf("vault: members: %w", err)
		}
		meta, _ := v.repo.Lookup(c.TreeHash, ".memvault")
		if meta.Hash != lastMeta {
			lastMeta = meta.Hash
			for i := range ms {
				if open[i] && !present(c.TreeHash, &ms[i]) {
					open[i] = false
				}
			}
		}
		for i := range ms {
			if open[i] {
				ms[i].Since = c.Committer.When
			}
		}
		h = gitlog.ZeroHash
		if len(c.ParentHashes) > 0 {
			h = c.ParentHashes[0]
		}
	}
	return nil
}

// AddMember makes m a member in one commit described by meta (its Command
// defaults to "members-add"): its reader key a recipient, named, and unless
// readOnly (or m has none) its signing key a writer, named; every current
// file is encrypted again so that it reads them (and, in the sealed format,
// the whole history through the vault key). A name another member holds with
// other keys is refused with an error wrapping ErrExist; adding a member as
// it is changes nothing. The error is otherwise ChangeRecipients's.
func (v *Vault) AddMember(ctx context.Context, meta Meta, m keys.Member, readOnly bool, progress func(done, total int)) (RecipientsResult, error) {
	if err := keys.CheckMemberName(m.Name); err != nil {
		return RecipientsResult{}, err
	}
	ms, err := v.Members(ctx)
	if err != nil {
		return RecipientsResult{}, err
	}
	for _, o := range ms {
		if o.Name != m.Name {
			continue
		}
		if !slices.ContainsFunc(o.Readers, func(r keys.Recipient) bool { return r.Key == m.Reader.Key }) {
			return RecipientsResult{}, fmt.Errorf("vault: a member named %q reads with another key: remove it first, or choose another name: %w", m.Name, ErrExist)
		}
	}
	if meta.Command == "" {
		meta.Command = "members-add"
	}
	ch := RecipientChange{Add: []string{m.Reader.Key}, Comment: m.Name, Progress: progress}
	if m.Writer != nil && !readOnly {
		w := *m.Writer
		w.Comment = m.Name
		ch.AddWriters = []keys.Writer{w}
	}
	res, err := v.ChangeRecipients(ctx, meta, ch)
	if err != nil || len(res.Added) > 0 || len(ch.AddWriters) == 0 {
		return res, err
	}
	// A reader already: only the writer is new (or nothing is).
	if ws, _, err := v.Writers(ctx); err == nil {
		if _, ok := keys.FindWriter(ws, ch.AddWriters[0].Public); ok {
			return res, nil
		}
	}
	_, err = v.ChangeWriters(ctx, meta, ch.AddWriters, nil)
	return res, err
}

// RemoveMember removes the member named name in one commit described by meta
// (its Command defaults to "members-remove"): each of its reader keys as a
// recipient and each of its signing keys as a writer, listed among the
// removed writers so that a commit it signs later is refused, whatever parent
// it names. In the sealed format the vault key rotates: the member reads
// nothing written from then on, on any clone. The error wraps ErrNotExist
// when no member has that name; otherwise it is ChangeRecipients's.
func (v *Vault) RemoveMember(ctx context.Context, meta Meta, name string, progress func(done, total int)) (RecipientsResult, error) {
	ms, err := v.Members(ctx)
	if err != nil {
		return RecipientsResult{}, err
	}
	i := slices.IndexFunc(ms, func(m Member) bool { return m.Name == name && name != "" })
	if i < 0 {
		return RecipientsResult{}, fmt.Errorf("vault: no member is named %q ('memvault members' lists them): %w", name, ErrNotExist)
	}
	if meta.Command == "" {
		meta.Command = "members-remove"
	}
	ch := RecipientChange{Progress: progress}
	for _, r := range ms[i].Readers {
		ch.Remove = append(ch.Remove, r.Key)
	}
	for _, w := range ms[i].Writers {
		ch.RemoveWriters = append(ch.RemoveWriters, w.Fingerprint)
	}
	if len(ch.Remove) == 0 {
		_, err := v.ChangeWriters(ctx, meta, nil, ch.RemoveWriters)
		return RecipientsResult{}, err
	}
	return v.ChangeRecipients(ctx, meta, ch)
}

// readerAt reports whether this identity is among the recipients of commit
// h's tree: a sync from a remote that removed it as a reader has nothing it
// could read, and says so rather than refuse each tree.
func (v *Vault) readerAt(h gitlog.Hash) (bool, error) {
	id, err := v.keys.identity()
	if err != nil {
		return false, err
	}
	root, err := v.repo.RootTree(h)
	if err != nil {
		return false, err
	}
	f, err := v.keys.recipientsFileIn(root) // the key is not needed, nor perhaps held
	if err != nil {
		return false, err
	}
	for _, r := range id.Recipients {
		if f.Index(r.Key) >= 0 {
			return true, nil
		}
	}
	return false, nil
}
