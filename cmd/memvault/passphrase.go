package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// envPassphraseFile stands in for --passphrase-file.
const envPassphraseFile = "MEMVAULT_PASSPHRASE_FILE"

// errNoPassphraseTerminal: a passphrase is needed, no file gives it and there is no
// terminal to ask on.
var errNoPassphraseTerminal = errors.New("no terminal to ask for a passphrase on: give it with --passphrase-file or " + envPassphraseFile)

// errNoNewPassphraseTerminal: a new passphrase is needed (to protect an
// identity), no file gives it and there is no terminal to ask on. Every
// command that asks for one has --new-passphrase-file; --passphrase-file is
// the current passphrase, of the identity in use, and not an answer here.
var errNoNewPassphraseTerminal = errors.New("no terminal to ask for the new passphrase on: " +
	"give it with --new-passphrase-file (--passphrase-file is the current one)")

// passphrase answers the vault when a protected identity needs its passphrase:
// the content of --passphrase-file (else $MEMVAULT_PASSPHRASE_FILE) without
// its final newline, else a prompt on the terminal. The vault asks once per
// process, not once per file.
func (g *globalOptions) passphrase(prompt string) ([]byte, error) {
	if f := firstNonEmpty(g.passphraseFile, os.Getenv(envPassphraseFile)); f != "" {
		return readPassphraseFile(f)
	}
	return askTerminal(prompt)
}

// newPassphrase gets a passphrase to protect an identity with: the content of
// file if one is named, else typed twice on the terminal.
func newPassphrase(file, what string) ([]byte, error) {
	if file != "" {
		return readPassphraseFile(file)
	}
	pw, err := askTerminal("Enter a passphrase for " + what + ":")
	if errors.Is(err, errNoPassphraseTerminal) {
		return nil, errNoNewPassphraseTerminal
	}
	if err != nil {
		return nil, err
	}
	again, err := askTerminal("Confirm the passphrase:")
	if err != nil {
		return nil, err
	}
	defer clear(again)
	if !bytes.Equal(pw, again) {
		clear(pw)
		return nil, errors.New("the passphrases do not match")
	}
	if len(pw) == 0 {
		return nil, errors.New("an empty passphrase protects nothing")
	}
	return pw, nil
}

func readPassphraseFile(name string) ([]byte, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read the passphrase file: %w", err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) == 0 {
		return nil, fmt.Errorf("the passphrase file %s is empty", name)
	}
	return b, nil
}

// ttyPath is the terminal passphrases are asked on; the tests point it elsewhere.
var ttyPath = "/dev/tty"

// askTerminal prompts on the controlling terminal, not stdin or stdout (those
// may carry tool calls), and reads a line without echoing it.
func askTerminal(prompt string) ([]byte, error) {
	tty, err := os.OpenFile(ttyPath, os.O_RDWR, 0)
	if err != nil {
		return nil, errNoPassphraseTerminal
	}
	defer tty.Close()
	if !term.IsTerminal(int(tty.Fd())) {
		return nil, errNoPassphraseTerminal
	}
	fmt.Fprint(tty, prompt+" ")
	pw, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	if err != nil {
		return nil, fmt.Errorf("read the passphrase: %w", err)
	}
	return pw, nil
}

// newPassphraseFlags are the flags of the commands that protect a new identity.
type newPassphraseFlags struct {
	protect bool   // --passphrase
	file    string // --new-passphrase-file
}

func (f *newPassphraseFlags) register(c *cobra.Command, what string) {
	c.Flags().BoolVar(&f.protect, "passphrase", false, "protect "+what+" with a passphrase, asked on the terminal")
	c.Flags().StringVar(&f.file, "new-passphrase-file", "", "protect "+what+" with the passphrase in `FILE` (implies --passphrase)")
}

// get returns the new passphrase, or nil when none is wanted.
func (f *newPassphraseFlags) get(what string) ([]byte, error) {
	if !f.protect && f.file == "" {
		return nil, nil
	}
	return newPassphrase(f.file, what)
}
