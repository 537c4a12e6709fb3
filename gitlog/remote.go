package gitlog

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/config"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/memvault/memvault/gitlog/internal/transport"
)

// Remote is a configured remote: a name and the URL it stands for.
type Remote struct {
	Name string
	URL  string
}

// RemoteRef is the ref that holds the last fetched main branch of remote name.
func RemoteRef(name string) string {
	return "refs/remotes/" + name + "/main"
}

// AddRemote records remote name with url in the repository's config. The error
// wraps ErrRemoteExists if the name is taken and ErrBadRefName if the name could
// not be part of a ref.
func (r *Repo) AddRemote(name, rawURL string) error {
	if err := CheckRefName("refs/remotes/" + name + "/main"); err != nil || strings.Contains(name, "/") {
		return fmt.Errorf("gitlog: remote %q: %w", name, ErrBadRefName)
	}
	if rawURL == "" {
		return fmt.Errorf("gitlog: remote %s: empty URL", name)
	}
	return r.updateConfig(func(cfg *config.Config) error {
		if _, ok := cfg.Remotes[name]; ok {
			return fmt.Errorf("gitlog: remote %s: %w", name, ErrRemoteExists)
		}
		cfg.Remotes[name] = &config.RemoteConfig{
			Name:  name,
			URLs:  []string{rawURL},
			Fetch: []config.RefSpec{config.RefSpec("+" + string(Branch) + ":" + string(RemoteRef(name)))},
		}
		return nil
	})
}

// RemoveRemote forgets remote name and its fetched branch. The error wraps
// ErrNoRemote if there is no such remote.
func (r *Repo) RemoveRemote(name string) error {
	return r.updateConfig(func(cfg *config.Config) error {
		if _, ok := cfg.Remotes[name]; !ok {
			return fmt.Errorf("gitlog: remote %s: %w", name, ErrNoRemote)
		}
		delete(cfg.Remotes, name)
		h, err := r.Ref(RemoteRef(name))
		if err != nil || h.IsZero() {
			return err
		}
		return r.persist(RemoteRef(name), h, ZeroHash, nil)
	})
}

// updateConfig changes the repository's config with change, under the writer
// lock so that no other process's change is lost, and by rename so that a
// crash leaves the old config or the new one whole. change runs under the lock
// too.
func (r *Repo) updateConfig(change func(*config.Config) error) error {
	unlock, err := r.lock(context.Background())
	if err != nil {
		return err
	}
	defer unlock()
	cfg, err := r.st.Config()
	if err != nil {
		return fmt.Errorf("gitlog: read config: %w", err)
	}
	if err := change(cfg); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("gitlog: config: %w", err)
	}
	data, err := cfg.Marshal()
	if err != nil {
		return fmt.Errorf("gitlog: config: %w", err)
	}
	if err := r.disk.WriteFileAtomic(filepath.Join(r.dir, "config"), data, 0o644, true); err != nil {
		return fmt.Errorf("gitlog: write config: %w", err)
	}
	return nil
}

// Remotes lists the configured remotes by name.
func (r *Repo) Remotes() ([]Remote, error) {
	cfg, err := r.st.Config()
	if err != nil {
		return nil, fmt.Errorf("gitlog: read config: %w", err)
	}
	var out []Remote
	for name, rc := range cfg.Remotes {
		u := ""
		if len(rc.URLs) > 0 {
			u = rc.URLs[0]
		}
		out = append(out, Remote{Name: name, URL: u})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// remote returns the configuration of remote name; the error wraps ErrNoRemote.
func (r *Repo) remote(name string) (*config.RemoteConfig, error) {
	cfg, err := r.st.Config()
	if err != nil {
		return nil, fmt.Errorf("gitlog: read config: %w", err)
	}
	rc, ok := cfg.Remotes[name]
	if !ok || len(rc.URLs) == 0 {
		return nil, fmt.Errorf("gitlog: remote %s: %w", name, ErrNoRemote)
	}
	return rc, nil
}

// Redact removes any password or token from a URL, for messages.
func Redact(rawURL string) string { return transport.Redact(rawURL) }

// ConfigSection returns the options of section name in the repository's config
// file: each key, lower-cased as git compares keys without case, with the last
// value it is given. A config that is missing or cannot be parsed gives an empty
// map, so that a caller falls back on its defaults.
func (r *Repo) ConfigSection(name string) map[string]string {
	opts := map[string]string{}
	raw, err := os.ReadFile(filepath.Join(r.dir, "config"))
	if err != nil {
		return opts
	}
	cfg := format.New()
	if err := format.NewDecoder(bytes.NewReader(raw)).Decode(cfg); err != nil {
		return opts
	}
	for _, o := range cfg.Section(name).Options {
		opts[strings.ToLower(o.Key)] = o.Value
	}
	return opts
}
