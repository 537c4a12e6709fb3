package main

import (
	"os"
	"strconv"

	"github.com/memvault/memvault/vault/vaulttest"
)

// mainWithTestHooks is main as the testscripts run it, as age's tests run age:
// identities protected with a cheap scrypt work factor, and, when
// $MEMVAULT_TEST_FAIL_AFTER is a number, re-encryptions that fail after that
// many files, as if interrupted. No passphrase is ever asked on the terminal of
// whoever runs the tests.
func mainWithTestHooks() {
	ttyPath = os.DevNull
	vaulttest.FastScrypt()
	if n, err := strconv.ParseInt(os.Getenv("MEMVAULT_TEST_FAIL_AFTER"), 10, 64); err == nil {
		vaulttest.FailReencryptionAfter(n)
	}
	main()
}
