// Package memstoreapi speaks the memory stores API through the Anthropic SDK:
// a [Client] is the [memstore.Store] that memstore.Sync keeps a vault in sync
// with, so the vault's side of the sync builds no SDK in. It keeps the SDK's
// retries (429 and 5xx, honouring retry-after) and bounds what a store that
// never ends its listing, or its answer, can make a sync hold.
package memstoreapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/memvault/memvault/vault/memstore"
)

// Client speaks the memory stores API for one store through the Anthropic
// SDK, whose retries (429 and 5xx, honouring retry-after) and options it
// keeps.
type Client struct {
	api   anthropic.Client
	store string
}

var _ memstore.Store = (*Client)(nil)

// New returns the client of the store whose id is store. The SDK's options
// come after memvault's (six retries, the bound of an answer): by default
// the key and address come from ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL, as
// the SDK reads them.
func New(store string, opts ...option.RequestOption) *Client {
	opts = append([]option.RequestOption{option.WithMaxRetries(6), boundedAnswers}, opts...)
	return &Client{api: anthropic.NewClient(opts...), store: store}
}

// ID implements memstore.Store.
func (c *Client) ID() string { return c.store }

// Versions implements memstore.Store. A listing costs the versions'
// metadata, never their text, which Contents and Content fetch a few at a
// time. It returns an error wrapping [ErrListBounds] when the listing goes
// past its bounds.
func (c *Client) Versions(ctx context.Context, since time.Time) ([]memstore.Version, error) {
	params := anthropic.BetaMemoryStoreMemoryVersionListParams{
		Limit: anthropic.Int(100), // the most a page holds
		View:  anthropic.BetaManagedAgentsMemoryViewBasic,
	}
	if !since.IsZero() {
		params.CreatedAtGte = anthropic.Time(since)
	}
	var all []memstore.Version
	if err := c.list(ctx, params, func(v memstore.Version) { all = append(all, v) }); err != nil {
		return nil, err
	}
	// The API does not promise an order: sort oldest first, keeping the
	// server's order among versions of the same instant.
	if len(all) > 1 && all[0].Time.After(all[len(all)-1].Time) {
		slices.Reverse(all)
	}
	slices.SortStableFunc(all, func(a, b memstore.Version) int { return a.Time.Compare(b.Time) })
	return all, nil
}

// Contents implements memstore.Store. The API filters by whole seconds, so the listing may
// bring other versions too: only those in want are kept.
func (c *Client) Contents(ctx context.Context, from, to time.Time, want map[string]bool) (map[string]string, error) {
	params := anthropic.BetaMemoryStoreMemoryVersionListParams{
		Limit:        anthropic.Int(20), // the most a page holds with view=full
		View:         anthropic.BetaManagedAgentsMemoryViewFull,
		CreatedAtGte: anthropic.Time(from),
		CreatedAtLte: anthropic.Time(to),
	}
	got := make(map[string]string, len(want))
	err := c.list(ctx, params, func(v memstore.Version) {
		if want[v.ID] {
			got[v.ID] = v.Content
		}
	})
	return got, err
}

// Content implements memstore.Store.
func (c *Client) Content(ctx context.Context, id string) (string, error) {
	v, err := c.api.Beta.MemoryStores.MemoryVersions.Get(ctx, id, anthropic.BetaMemoryStoreMemoryVersionGetParams{
		MemoryStoreID: c.store, View: anthropic.BetaManagedAgentsMemoryViewFull,
	})
	if err != nil {
		return "", c.explain("read version "+id, err)
	}
	return v.Content, nil
}

// Bounds on one listing of the store's versions, and on any one answer: a
// store (or whatever answers at ANTHROPIC_BASE_URL) that never ends its
// listing once had a sync hold every version it listed, hundreds of
// megabytes, until --timeout. A listing of 100 versions a page holds their
// metadata, a few hundred bytes each: the bounds let a pull take 100,000
// versions at once, and a sync that meets them says so and stops.
var (
	maxListPages = 1000            // pages in one listing
	maxListBytes = 32 << 20        // bytes of answers in one listing
	listTimeout  = 5 * time.Minute // one listing, from its first request to its last page
	maxAnswer    = int64(16 << 20) // bytes of any one answer
)

// ErrListBounds is wrapped by the error of a Versions (and so of a sync)
// that stopped because a listing of the store's versions went past its bounds in pages, bytes or
// time, or repeated a page.
var ErrListBounds = errors.New("the store's listing went past its bounds")

// list pages through the store's versions as params ask, handing each to
// keep, within the listing bounds.
func (c *Client) list(ctx context.Context, params anthropic.BetaMemoryStoreMemoryVersionListParams, keep func(memstore.Version)) error {
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	var size int
	cursors := map[string]bool{}
	page, err := c.api.Beta.MemoryStores.MemoryVersions.List(lctx, c.store, params)
	for pages := 1; err == nil && page != nil; pages++ {
		if size += len(page.RawJSON()); size > maxListBytes {
			return fmt.Errorf("memory store %s: list the store's versions: %w: over %d MiB of answers", c.store, ErrListBounds, maxListBytes>>20)
		}
		for _, v := range page.Data {
			keep(toVersion(v))
		}
		if len(page.Data) == 0 || page.NextPage == "" {
			break
		}
		switch {
		case cursors[page.NextPage]:
			return fmt.Errorf("memory store %s: list the store's versions: %w: it sent a page it had sent before", c.store, ErrListBounds)
		case pages >= maxListPages:
			return fmt.Errorf("memory store %s: list the store's versions: %w: it did not end within %d pages", c.store, ErrListBounds, maxListPages)
		}
		cursors[page.NextPage] = true
		page, err = page.GetNextPage()
	}
	if err != nil && ctx.Err() == nil && lctx.Err() != nil {
		return fmt.Errorf("memory store %s: list the store's versions: %w: it did not end within %v", c.store, ErrListBounds, listTimeout)
	}
	if err != nil {
		return c.explain("list the store's versions", err)
	}
	return nil
}

// boundedAnswers cuts any answer longer than maxAnswer bytes: the SDK reads
// an answer whole before it decodes it.
var boundedAnswers = option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err == nil && res.Body != nil {
		res.Body = &boundedBody{ReadCloser: res.Body, res: res, left: maxAnswer}
	}
	return res, err
})

// errAnswerTooLong is the read error of an answer over maxAnswer bytes.
var errAnswerTooLong = fmt.Errorf("%w: an answer over %d MiB", ErrListBounds, maxAnswer>>20)

type boundedBody struct {
	io.ReadCloser
	res  *http.Response
	left int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			// Asking again would bring the same: the SDK retries a body it
			// could not read unless told not to.
			b.res.Header.Set("x-should-retry", "false")
			return 0, errAnswerTooLong
		}
		if err == nil {
			err = io.ErrNoProgress
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

func toVersion(v anthropic.BetaManagedAgentsMemoryVersion) memstore.Version {
	out := memstore.Version{ID: v.ID, MemoryID: v.MemoryID, Op: string(v.Operation), Path: v.Path, Content: v.Content,
		Redacted: !v.RedactedAt.IsZero(), Time: v.CreatedAt}
	a := v.CreatedBy
	switch a.Type {
	case "session_actor":
		out.Actor, out.Session = "session "+a.SessionID, a.SessionID
	case "api_actor":
		out.Actor = "api key " + a.APIKeyID
	case "user_actor":
		out.Actor = "user " + a.UserID
	case "service_account_actor":
		out.Actor = "service account " + a.ServiceAccountID
	}
	return out
}

// Create implements memstore.Store.
func (c *Client) Create(ctx context.Context, path, content string) (id, ver string, err error) {
	m, err := c.api.Beta.MemoryStores.Memories.New(ctx, c.store, anthropic.BetaMemoryStoreMemoryNewParams{
		Path: path, Content: anthropic.String(content), View: anthropic.BetaManagedAgentsMemoryViewBasic,
	}, noRetryOnConflict)
	if err != nil {
		return "", "", c.explain("create "+path, err)
	}
	return m.ID, m.MemoryVersionID, nil
}

// Update implements memstore.Store.
func (c *Client) Update(ctx context.Context, id, path, content, want string) (ver string, err error) {
	params := anthropic.BetaMemoryStoreMemoryUpdateParams{
		MemoryStoreID: c.store,
		Content:       anthropic.String(content),
		View:          anthropic.BetaManagedAgentsMemoryViewBasic,
	}
	if want != "" { // unknown only after a redaction there
		params.Precondition = anthropic.BetaManagedAgentsPreconditionParam{
			Type:          anthropic.BetaManagedAgentsPreconditionTypeContentSha256,
			ContentSha256: anthropic.String(want),
		}
	}
	m, err := c.api.Beta.MemoryStores.Memories.Update(ctx, id, params, noRetryOnConflict)
	if err != nil {
		return "", c.explain("update "+path, err)
	}
	return m.MemoryVersionID, nil
}

// Remove implements memstore.Store.
func (c *Client) Remove(ctx context.Context, id, path, want string) error {
	params := anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: c.store}
	if want != "" {
		params.ExpectedContentSha256 = anthropic.String(want)
	}
	_, err := c.api.Beta.MemoryStores.Memories.Delete(ctx, id, params, noRetryOnConflict)
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound {
		return nil // gone already: what the delete wanted
	}
	if err != nil {
		return c.explain("delete "+path, err)
	}
	return nil
}

// noRetryOnConflict keeps the SDK from retrying a 409 on a write: it answers
// a precondition, which no retry changes; the sync pulls and merges instead.
var noRetryOnConflict = option.WithMiddleware(func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err == nil && res.StatusCode == http.StatusConflict {
		res.Header.Set("x-should-retry", "false")
	}
	return res, err
})

// explain says what failed in the user's words, keeping the API's status for
// errors.As, and memstore.ErrPrecondition for a 409.
func (c *Client) explain(what string, err error) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		switch apiErr.StatusCode {
		case http.StatusConflict:
			return fmt.Errorf("memory store %s: %s: %w", c.store, what, memstore.ErrPrecondition)
		case http.StatusNotFound:
			return fmt.Errorf("memory store %s: %s: not found (is the store id right?)", c.store, what)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("memory store %s: %s: the API refused the key (HTTP %d): check ANTHROPIC_API_KEY", c.store, what, apiErr.StatusCode)
		}
		return fmt.Errorf("memory store %s: %s: HTTP %d", c.store, what, apiErr.StatusCode)
	}
	return fmt.Errorf("memory store %s: %s: %w", c.store, what, err)
}
