package clonetrust_test

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"testing"

	"filippo.io/age"
	"golang.org/x/crypto/ssh"

	"github.com/memvault/memvault/vault/clonetrust"
	"github.com/memvault/memvault/vault/keys"
)

func recipient(t *testing.T) keys.Recipient {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	r, err := keys.ParseRecipient(id.Recipient().String())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func writer(t *testing.T, comment string) keys.Writer {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return keys.WriterOf(sp, comment)
}

func TestJudge(t *testing.T) {
	mine, other, third := recipient(t), recipient(t), recipient(t)
	alice, bob := writer(t, "alice"), writer(t, "bob")
	found := clonetrust.Found{
		Recipients: []keys.Recipient{mine, other},
		Yours:      []bool{true, false},
		Writers:    []keys.Writer{alice, bob},
		HasWriters: true,
	}
	for _, tc := range []struct {
		name       string
		p          clonetrust.Policy
		f          clonetrust.Found
		recipients string
		writers    string
		err        error
	}{
		{"a stranger reads", clonetrust.Policy{}, found,
			"[(you) (NOT EXPECTED)]", "[ ]", clonetrust.ErrUnexpectedReaders},
		{"the stranger named", clonetrust.Policy{Expect: []string{other.Key}}, found,
			"[(you) (expected)]", "[ ]", nil},
		{"another key named", clonetrust.Policy{Expect: []string{third.Key}}, found,
			"[(you) (NOT EXPECTED)]", "[ ]", clonetrust.ErrUnexpectedReaders},
		{"all accepted", clonetrust.Policy{Accept: true}, found,
			"[(you) (expected)]", "[ ]", nil},
		{"every writer named, by fingerprint and by key", clonetrust.Policy{Accept: true, Writers: []string{alice.Fingerprint, bob.Key + " bob"}}, found,
			"[(you) (expected)]", "[(expected) (expected)]", nil},
		{"a writer not named", clonetrust.Policy{Accept: true, Writers: []string{" " + alice.Fingerprint + " "}}, found,
			"[(you) (expected)]", "[(expected) (NOT EXPECTED)]", clonetrust.ErrUnnamedWriters},
		{"an unnamed writer before a stranger", clonetrust.Policy{Writers: []string{alice.Fingerprint}}, found,
			"[(you) (NOT EXPECTED)]", "[(expected) (NOT EXPECTED)]", clonetrust.ErrUnnamedWriters},
		{"writers named, no writers list", clonetrust.Policy{Writers: []string{alice.Fingerprint}},
			clonetrust.Found{Recipients: []keys.Recipient{mine}, Yours: []bool{true}},
			"[(you)]", "[]", clonetrust.ErrNoWritersList},
		{"no writers list, none named", clonetrust.Policy{},
			clonetrust.Found{Recipients: []keys.Recipient{mine}, Yours: []bool{true}},
			"[(you)]", "[]", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.p.Judge(tc.f)
			if got := fmt.Sprint(v.Recipients); got != tc.recipients {
				t.Errorf("Judge: recipients marked %s, want %s", got, tc.recipients)
			}
			if got := fmt.Sprint(v.Writers); got != tc.writers {
				t.Errorf("Judge: writers marked %s, want %s", got, tc.writers)
			}
			if err := v.Err(); !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Errorf("Judge(...).Err() = %v, want %v", err, tc.err)
			}
		})
	}
}

// The refusals say how many keys and that nothing was cloned, as the
// command has always said it.
func TestErrText(t *testing.T) {
	for _, tc := range []struct {
		v    clonetrust.Verdict
		want string
	}{
		{clonetrust.Verdict{NoWritersList: true, Strangers: 1}, "clone: the vault has no writers list, so the writers you named cannot be checked; nothing was cloned"},
		{clonetrust.Verdict{Unnamed: 2, Strangers: 1}, "clone: the vault takes commits from 2 writer(s) you did not name; nothing was cloned"},
		{clonetrust.Verdict{Strangers: 3}, "clone: the vault is encrypted to 3 key(s) besides yours that you did not name; nothing was cloned"},
	} {
		if err := tc.v.Err(); err == nil || err.Error() != tc.want {
			t.Errorf("%+v.Err() = %v, want %q", tc.v, err, tc.want)
		}
	}
}

func TestPinsAndCheckWriter(t *testing.T) {
	w := writer(t, "alice")
	pins := clonetrust.Pins([]string{w.Key + " alice", "  " + w.Fingerprint + "\n"})
	if fmt.Sprint(pins) != fmt.Sprint([]string{w.Fingerprint, w.Fingerprint}) {
		t.Errorf("Pins(key, fingerprint) = %q, want the fingerprint twice", pins)
	}
	if clonetrust.Pins(nil) != nil {
		t.Errorf("Pins(nil) = %q, want nil: no writers pinned", clonetrust.Pins(nil))
	}
	for _, s := range []string{w.Key, w.Key + " alice", w.Fingerprint, " SHA256:anything"} {
		if err := clonetrust.CheckWriter(s); err != nil {
			t.Errorf("CheckWriter(%q) = %v, want nil", s, err)
		}
	}
	for _, s := range []string{"", "alice", "age1qqq", "ssh-ed25519 notbase64"} {
		if err := clonetrust.CheckWriter(s); err == nil {
			t.Errorf("CheckWriter(%q) = nil, want a refusal", s)
		}
	}
}
