package vault

// TEMPORARY: signatures being implemented; bodies land shortly.

import "context"

// Options configure Open and Init.
type Options struct {
	// IdentityFile is the age identity used to decrypt; "" means DefaultIdentityFile.
	IdentityFile string
}

// InitResult says what Init made.
type InitResult struct {
	VaultCreated    bool
	IdentityCreated bool
	Recipient       string // the identity's public recipient
}

type Vault struct{}
type Snapshot struct{}
type Tx struct{ *Snapshot }

func Init(ctx context.Context, dir string, opts Options) (*Vault, InitResult, error) { panic("todo") }
func Open(ctx context.Context, dir string, opts Options) (*Vault, error)             { panic("todo") }
func (v *Vault) Close() error                                                        { panic("todo") }
func (v *Vault) Dir() string                                                         { panic("todo") }
func (v *Vault) Limits() Limits                                                      { panic("todo") }
func (v *Vault) Snapshot(ctx context.Context) (*Snapshot, error)                     { panic("todo") }
func (v *Vault) Update(ctx context.Context, meta Meta, fn func(tx *Tx) error) error  { panic("todo") }
func (v *Vault) Log(ctx context.Context, opts LogOptions) ([]Record, error)          { panic("todo") }
func (s *Snapshot) Stat(p string) (Kind, error)                                      { panic("todo") }
func (s *Snapshot) ReadFile(ctx context.Context, p string) ([]byte, error)           { panic("todo") }
func (s *Snapshot) List(ctx context.Context, p string) ([]Entry, error)              { panic("todo") }
func (tx *Tx) WriteFile(ctx context.Context, p string, data []byte) error            { panic("todo") }
func (tx *Tx) Remove(p string) error                                                 { panic("todo") }
func (tx *Tx) Rename(oldPath, newPath string) error                                  { panic("todo") }
func DefaultDir() (string, error)                                                    { panic("todo") }
func DefaultIdentityFile() (string, error)                                           { panic("todo") }
