package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memvault/memvault/agent"
	"github.com/memvault/memvault/agent/internal/contract"
	"github.com/memvault/memvault/vault"
)

// resourceSync keeps an MCP server's resources in step with the vault: one
// resource per memory file, added and removed as commits come, and an updated
// notification for each subscribed file whose content changed. A file whose
// size changed is not replaced, which would tell every client that the list
// changed when only a file did: a list shows the sizes as they are now
// (sizes).
type resourceSync struct {
	store agent.VaultStore
	srv   *mcp.Server

	mu     sync.Mutex // held through a refresh, so refreshes never interleave
	snap   *vault.Snapshot
	files  map[string]int64 // memory path -> plaintext size, as last listed
	subs   map[string]int   // subscribed URI -> number of subscriptions
	failed bool             // the last refresh failed; the next one starts over
}

func newResourceSync(store agent.VaultStore, srv *mcp.Server) *resourceSync {
	return &resourceSync{store: store, srv: srv, files: map[string]int64{}, subs: map[string]int{}}
}

// watch counts a subscription to uri (delta 1) or its end (delta -1).
func (r *resourceSync) watch(uri string, delta int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subs[uri] += delta; r.subs[uri] <= 0 {
		delete(r.subs, uri)
	}
}

// refresh brings the resources up to the vault's current commit. It costs one
// ref read when nothing changed. It reports whether it succeeded; a failure
// (the vault unreadable for a moment) is retried by the next call.
func (r *resourceSync) refresh(ctx context.Context) bool {
	updated, ok := r.sync(ctx)
	// Sent without the lock held: a slow client must not hold up the others.
	for _, uri := range updated {
		_ = r.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
	return ok
}

// sync updates the resource list and returns the subscribed URIs whose
// content changed.
func (r *resourceSync) sync(ctx context.Context) (updated []string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, err := r.store.Snapshot(ctx)
	if err != nil {
		return nil, false
	}
	if r.snap != nil && !r.failed && s.Commit() == r.snap.Commit() {
		return nil, true
	}
	files := map[string]int64{}
	if err := listFiles(ctx, s, vault.Root, files); err != nil {
		r.failed = true
		return nil, false
	}
	var gone []string
	for p := range r.files {
		if _, ok := files[p]; !ok {
			gone = append(gone, resourceURI(p))
		}
	}
	if len(gone) > 0 {
		r.srv.RemoveResources(gone...)
	}
	for p, size := range files {
		if _, ok := r.files[p]; !ok {
			r.srv.AddResource(&mcp.Resource{
				URI: resourceURI(p), Name: p, Title: path.Base(p), MIMEType: mimeType(p), Size: size,
			}, r.read)
		}
	}
	if r.snap != nil {
		for uri := range r.subs {
			p, ok := memoryPathOf(uri)
			_, before := r.files[p]
			_, after := files[p]
			// A path that is a file on neither side costs no read.
			if ok && (before || after) && changed(ctx, r.snap, s, p) {
				updated = append(updated, uri)
			}
		}
	}
	r.snap, r.files, r.failed = s, files, false
	return updated, true
}

// sizes gives the resources of a list the sizes their files have now, in
// copies: the SDK's own are shared with every list.
func (r *resourceSync) sizes(res *mcp.ListResourcesResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, rs := range res.Resources {
		if p, ok := memoryPathOf(rs.URI); ok {
			if size, ok := r.files[p]; ok && size != rs.Size {
				c := *rs
				c.Size = size
				res.Resources[i] = &c
			}
		}
	}
}

// listFiles adds every file under directory p to files, hidden ones included.
func listFiles(ctx context.Context, s *vault.Snapshot, p string, files map[string]int64) error {
	entries, err := s.List(ctx, p)
	if err != nil {
		return err
	}
	for _, e := range entries {
		child := p + "/" + e.Name
		if !e.Dir {
			files[child] = e.Size
		} else if err := listFiles(ctx, s, child, files); err != nil {
			return err
		}
	}
	return nil
}

// changed tells whether what is at memory path p differs between two snapshots.
// A file that cannot be read on either side counts as changed.
func changed(ctx context.Context, before, after *vault.Snapshot, p string) bool {
	a, errA := before.ReadFile(ctx, p)
	b, errB := after.ReadFile(ctx, p)
	if errors.Is(errA, vault.ErrNotExist) && errors.Is(errB, vault.ErrNotExist) {
		return false
	}
	return errA != nil || errB != nil || !bytes.Equal(a, b)
}

// read answers resources/read for a memory file.
func (r *resourceSync) read(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	p, ok := memoryPathOf(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	s, err := r.store.Snapshot(ctx)
	if err != nil {
		return nil, readError(uri, err)
	}
	data, err := s.ReadFile(ctx, p)
	if errors.Is(err, vault.ErrNotExist) || errors.Is(err, vault.ErrIsDir) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, readError(uri, err)
	}
	// A client reads a resource to put it before a model: a use, as a view is,
	// so that memvault expire keeps the file.
	contract.RecordView(r.store, p)
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeType(p)}
	if utf8.Valid(data) {
		c.Text = string(data)
	} else {
		c.Blob = data
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// readError describes a failed read for the client without its details: no
// paths on the disk, no key material.
func readError(uri string, err error) error {
	what := contract.StorageFailure
	switch {
	case errors.Is(err, vault.ErrNoIdentity):
		what = "no usable identity"
	case errors.Is(err, vault.ErrDecrypt):
		what = "cannot decrypt the memory file"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		what = "canceled"
	}
	return fmt.Errorf("memvault: read %s: %s", uri, what)
}

// resourceURI is the URI of memory path p: memory:///memories/notes/a%20b.md.
func resourceURI(p string) string {
	return (&url.URL{Scheme: "memory", Path: p}).String()
}

// memoryPathOf is the memory path a resource URI names, if it names a canonical one.
func memoryPathOf(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "memory" || u.Host != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", false
	}
	p, err := vault.CleanPath(u.Path)
	if err != nil || p != u.Path || p == vault.Root {
		return "", false
	}
	return p, true
}

// mimeType guesses a memory file's type from its name: memory files are text.
func mimeType(p string) string {
	switch path.Ext(p) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".json":
		return "application/json"
	}
	return "text/plain"
}
