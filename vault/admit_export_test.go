package vault

import (
	"context"

	"github.com/memvault/memvault/gitlog"
)

// SkipAdmission turns sync's admission check off (true) or on, for
// BenchmarkSyncAdmission.
func SkipAdmission(off bool) { skipAdmission.Store(off) }

// SkipArrivalTree turns off only the check of the tree main would take, for
// BenchmarkSyncAdmission.
func SkipArrivalTree(off bool) { skipArrivalTree.Store(off) }

// SkipSigning turns signing commits and checking signatures off (true) or
// on, for BenchmarkSigning.
func SkipSigning(off bool) { skipSigning.Store(off) }

// FetchForAdmit fetches remote into v and returns what arrived, for
// BenchmarkAdmit1000.
func FetchForAdmit(ctx context.Context, v *Vault, remote string) (gitlog.Hash, error) {
	return v.repo.Fetch(ctx, remote, gitlog.TransferOptions{})
}

// AdmitFetched runs the admission check sync runs on theirs, and returns how
// many entries it refused.
func AdmitFetched(ctx context.Context, v *Vault, theirs gitlog.Hash) (int, error) {
	ours, err := v.repo.Head()
	if err != nil {
		return 0, err
	}
	base, err := v.repo.MergeBase(ctx, ours, theirs)
	if err != nil {
		return 0, err
	}
	rs, err := admit(ctx, v.repo, v.limits, v.sealKeyBlob, base, theirs, trustRules{})
	return len(rs), err
}

// ArrivalTreeFetched runs the check of the tree main would take that sync
// runs on theirs (against ours's tree, as sync's refusedOnArrival does),
// and returns how many entries it refused.
func ArrivalTreeFetched(ctx context.Context, v *Vault, theirs gitlog.Hash) (int, error) {
	ours, err := v.repo.Head()
	if err != nil {
		return 0, err
	}
	oursT, err := v.repo.RootTree(ours)
	if err != nil {
		return 0, err
	}
	theirsT, err := v.repo.RootTree(theirs)
	if err != nil {
		return 0, err
	}
	rs, err := refusedIn(ctx, v.repo, v.limits, v.sealKeyBlob, theirs, theirsT, oursT)
	return len(rs), err
}

// SkipTrust turns admission's trust rules off (true) or on, for
// BenchmarkTrust.
func SkipTrust(off bool) { skipTrust.Store(off) }
