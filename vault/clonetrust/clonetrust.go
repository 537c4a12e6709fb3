// Package clonetrust is what a new clone or join takes on trust. A new
// clone has nothing to compare a vault with: a host that appended its own
// key to the recipients file would read everything written there, and one
// that made up a history of its own would have its writers trusted. So a
// recipient that is not the identity's own key must be named by the person
// (or all accepted), and when the person names writers (pins), every writer
// the vault lists must be one of them. Asking at a terminal would teach
// people to press y; naming keys asks them to look at the keys first, and
// works the same in a script.
package clonetrust

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/memvault/memvault/vault/keys"
)

// Policy is what a new clone takes without asking: a vault read only by the
// identity in use, or the keys a person named.
type Policy struct {
	Accept  bool     // every recipient the vault holds
	Expect  []string // recipients besides the identity's that may read, as a person gives them
	Writers []string // the only writers to take, when any is named: fingerprints or public keys
}

// Found is what a clone found in the vault it is about to take; it has the
// fields of the clone's own report, so that report converts to it.
type Found struct {
	Recipients []keys.Recipient // whoever holds one of these reads what is written
	Yours      []bool           // Yours[i]: Recipients[i] is a key of the identity in use
	Writers    []keys.Writer    // whose signed commits the clone takes
	HasWriters bool             // false for a vault from before writers
}

// Mark says how a policy sees one recipient or writer.
type Mark int

// The marks, as a person reads them beside each key.
const (
	Unmarked    Mark = iota // a writer, when the person named none
	Yours                   // a recipient that is the identity's own key
	Expected                // named by the person (or every recipient, accepted)
	NotExpected             // not named: the clone is refused
)

// String returns the mark as it is shown beside a key: "", "(you)",
// "(expected)" or "(NOT EXPECTED)".
func (m Mark) String() string {
	switch m {
	case Yours:
		return "(you)"
	case Expected:
		return "(expected)"
	case NotExpected:
		return "(NOT EXPECTED)"
	}
	return ""
}

// Verdict is a policy's judgement of what a clone found.
type Verdict struct {
	Recipients []Mark // one for each of Found.Recipients
	Writers    []Mark // one for each of Found.Writers
	// Strangers are the recipients not expected; Unnamed, the writers.
	Strangers, Unnamed int
	// NoWritersList: writers were named, and the vault has no writers list
	// to check them against.
	NoWritersList bool
}

// The refusals of Verdict.Err, for errors.Is.
var (
	ErrNoWritersList     = errors.New("the vault has no writers list, so the writers you named cannot be checked")
	ErrUnnamedWriters    = errors.New("the vault takes commits from writers you did not name")
	ErrUnexpectedReaders = errors.New("the vault is encrypted to keys besides yours that you did not name")
)

// Judge marks each recipient and writer f holds by the policy.
func (p Policy) Judge(f Found) Verdict {
	var v Verdict
	for i, r := range f.Recipients {
		switch {
		case i < len(f.Yours) && f.Yours[i]:
			v.Recipients = append(v.Recipients, Yours)
		case p.Accept || slices.ContainsFunc(p.Expect, func(k string) bool { return sameRecipient(k, r) }):
			v.Recipients = append(v.Recipients, Expected)
		default:
			v.Recipients = append(v.Recipients, NotExpected)
			v.Strangers++
		}
	}
	// With writers named, the clone checks already that one of them vouched
	// for the history (the clone's ExpectWriters, from Pins); a writer the
	// head lists that the person did not name is refused too, so that
	// whoever clones looks at every key that may write what they will read.
	for _, w := range f.Writers {
		switch {
		case len(p.Writers) == 0:
			v.Writers = append(v.Writers, Unmarked)
		case slices.ContainsFunc(p.Writers, func(s string) bool { return sameWriter(s, w) }):
			v.Writers = append(v.Writers, Expected)
		default:
			v.Writers = append(v.Writers, NotExpected)
			v.Unnamed++
		}
	}
	v.NoWritersList = len(p.Writers) > 0 && !f.HasWriters
	return v
}

// Err is nil when the clone may go on, else the first refusal: writers
// named with no writers list to check them, then writers not named, then
// recipients not expected. It wraps ErrNoWritersList, ErrUnnamedWriters or
// ErrUnexpectedReaders.
func (v Verdict) Err() error {
	switch {
	case v.NoWritersList:
		return fmt.Errorf("clone: %w; nothing was cloned", ErrNoWritersList)
	case v.Unnamed > 0:
		return &countError{fmt.Sprintf("clone: the vault takes commits from %d writer(s) you did not name; nothing was cloned", v.Unnamed), ErrUnnamedWriters}
	case v.Strangers > 0:
		return &countError{fmt.Sprintf("clone: the vault is encrypted to %d key(s) besides yours that you did not name; nothing was cloned", v.Strangers), ErrUnexpectedReaders}
	}
	return nil
}

// countError is a refusal that says how many keys it is about.
type countError struct {
	msg string
	is  error
}

func (e *countError) Error() string { return e.msg }
func (e *countError) Unwrap() error { return e.is }

// CheckWriter refuses s, as a person names a writer, when it is neither a
// fingerprint (SHA256:…) nor a public SSH key; the error starts with s,
// quoted, for the caller to say where s came from.
func CheckWriter(s string) error {
	if strings.HasPrefix(strings.TrimSpace(s), "SHA256:") {
		return nil
	}
	if _, err := keys.ParseWriter(s); err != nil {
		return fmt.Errorf("%q: neither a fingerprint (SHA256:…) nor a public SSH key", s)
	}
	return nil
}

// Pins returns the fingerprints of the writers a person named, public keys
// turned into theirs: the writers a clone takes a history from.
func Pins(writers []string) []string {
	var pins []string
	for _, k := range writers {
		if w, err := keys.ParseWriter(k); err == nil {
			k = w.Fingerprint
		}
		pins = append(pins, strings.TrimSpace(k))
	}
	return pins
}

// sameWriter tells whether s, a fingerprint (SHA256:…) or a public key line as a
// person gives a writer, is w.
func sameWriter(s string, w keys.Writer) bool {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "SHA256:") {
		return s == w.Fingerprint
	}
	k, err := keys.ParseWriter(s)
	return err == nil && k.Fingerprint == w.Fingerprint
}

// sameRecipient tells whether s, as a person gives a key, is r.
func sameRecipient(s string, r keys.Recipient) bool {
	k, err := keys.ParseRecipient(s)
	return err == nil && k.Key == r.Key
}
