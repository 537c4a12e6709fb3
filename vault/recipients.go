package vault

import (
	"context"
	"fmt"

	"github.com/memvault/memvault/vault/keys"
)

// Recipients returns the public keys the snapshot's files are encrypted to, in
// the order of its recipients file. The error wraps ErrRecipients if that file
// is malformed.
func (s *Snapshot) Recipients(ctx context.Context) ([]keys.Recipient, error) {
	f, err := s.recipientsFile()
	if err != nil {
		return nil, err
	}
	return f.List(), nil
}

func (s *Snapshot) recipientsContent() ([]byte, error) {
	e, err := s.v.repo.Lookup(s.root, recipientsPath)
	if err != nil {
		return nil, fmt.Errorf("vault: %s: %w", recipientsPath, err)
	}
	content, err := s.v.repo.ReadBlob(e.Hash)
	if err != nil {
		return nil, fmt.Errorf("vault: %s: %w", recipientsPath, err)
	}
	return content, nil
}

func (s *Snapshot) recipientsFile() (*keys.RecipientsFile, error) {
	content, err := s.recipientsContent()
	if err != nil {
		return nil, err
	}
	return keys.ParseRecipientsFile(content)
}
