package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// mcpTokenFile is where `memvault mcp --http` keeps the bearer token it
// makes when none is given: $XDG_CONFIG_HOME/memvault/mcp-token, beside the
// default identity, readable by its owner only. Loopback is open to every
// account on the machine; this file is what tells the user's clients apart.
func mcpTokenFile() (string, error) {
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("mcp: token file: %w", err)
	}
	return filepath.Join(base, "memvault", "mcp-token"), nil
}

// loadOrCreateToken returns the token in the file at path, making the file
// (mode 0600, its folder 0700) with a new random token when it does not
// exist; created says which. A file that is not a regular file (a symlink
// included), that others may read, or that is empty is refused: its token
// would not keep other users out.
func loadOrCreateToken(path string) (token string, created bool, err error) {
	token, err = readTokenFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return token, false, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, fmt.Errorf("mcp: token: %w", err)
	}
	token = hex.EncodeToString(b[:])
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", false, fmt.Errorf("mcp: token: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) { // another server made it first: use that one
		token, err = readTokenFile(path)
		return token, false, err
	}
	if err != nil {
		return "", false, fmt.Errorf("mcp: token: %w", err)
	}
	_, err = f.WriteString(token + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", false, fmt.Errorf("mcp: token: %w", err)
	}
	return token, true, nil
}

// readTokenFile reads the token kept at path, refusing a file that is not
// the user's own secret (see loadOrCreateToken).
func readTokenFile(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("mcp: token: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("mcp: token file %s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("mcp: token file %s can be read by other users (mode %04o): run chmod 600 %s",
			path, fi.Mode().Perm(), shellQuote(path))
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("mcp: token: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("mcp: token file %s is empty", path)
	}
	return token, nil
}
