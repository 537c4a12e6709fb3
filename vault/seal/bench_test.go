package seal

import (
	"fmt"
	"testing"
)

var sink any

func BenchmarkName(b *testing.B) {
	k := testKey(b, 1)
	stored, _ := k.SealName("/memories/clients/acme", "customer_acme_complaint.md")
	// seal and open are the cryptography, the key's cache emptied each time;
	// open-again is a name the key opened before.
	b.Run("seal", func(b *testing.B) {
		for b.Loop() {
			k.cache.clear()
			sink, _ = k.SealName("/memories/clients/acme", "customer_acme_complaint.md")
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			k.cache.clear()
			sink, _ = k.OpenName("/memories/clients/acme", stored)
		}
	})
	b.Run("open-again", func(b *testing.B) {
		for b.Loop() {
			sink, _ = k.OpenName("/memories/clients/acme", stored)
		}
	})
	b.Run("seal-path-depth-4", func(b *testing.B) {
		for b.Loop() {
			k.cache.clear()
			sink, _ = k.SealPath("/memories", "/memories/clients/acme/2026/customer_acme_complaint.md")
		}
	})
}

// A message the size memvault writes for one tool call.
var benchMessage = Message{
	Text: "str_replace /memories/clients/acme/customer_acme_complaint.md\n\n" +
		"Memory-Command: str_replace\nMemory-Path: /memories/clients/acme/customer_acme_complaint.md\n" +
		"Tool-Use-Id: toolu_01ABCDEFGHIJKLMNOPQRSTUV\nAgent: support-agent\nSession: 7f3a9c2e-1b4d-4e8f-9a6b-2c5d8e1f0a3b\n",
	AuthorName: "support-agent", AuthorEmail: "agent@memvault",
}

func BenchmarkMessage(b *testing.B) {
	k := testKey(b, 1)
	sealed, _ := k.SealMessage(benchMessage)
	b.Run("seal", func(b *testing.B) {
		for b.Loop() {
			sink, _ = k.SealMessage(benchMessage)
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			sink, _ = k.OpenMessage(sealed)
		}
	})
}

func BenchmarkPad(b *testing.B) {
	for _, n := range []int{1 << 10, 64 << 10} {
		plain := make([]byte, n)
		frame := Pad(plain)
		b.Run(fmt.Sprintf("pad-%dK", n>>10), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				sink = Pad(plain)
			}
		})
		b.Run(fmt.Sprintf("unpad-%dK", n>>10), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				sink, _ = Unpad(frame)
			}
		})
	}
}

func BenchmarkSize(b *testing.B) {
	k := testKey(b, 1)
	hdr := []byte("age-encryption.org/v1\n-> X25519 TiF4ZpZx3FZOvb8ouO1k9wzBJ5Q1CZyE0smFJhEdrCs\nSj9ikfBlzSvtCkuWSjuLjcIVP4sJyN3JB3OSnxfVZ0Y\n--- Ab7Rs0vaOtETlCndcVP0aA4ugBbVZRl5SmM3YxlxWw4\n")
	h, _ := k.SealSize(5000, hdr)
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			sink, _ = k.OpenSize(h, hdr)
		}
	})
	// A blob's size as a listing and an admission read it: its age
	// header found in the blob first.
	blob, _ := k.SealBlob(5000, append(hdr[:len(hdr):len(hdr)], "payload"...))
	b.Run("open-blob", func(b *testing.B) {
		for b.Loop() {
			sink, _ = k.OpenBlobSize(blob)
		}
	})
}

// BenchmarkList10000 is the cost that decides between the two layouts, for a
// vault of 10,000 files in 100 folders of 100:
//
//   - flat: every stored name seals a full path in one folder, so any listing
//     opens all 10,000 names, and every write rewrites the one tree of 10,000
//     entries;
//   - per-component: a listing of one folder opens its 100 names; the listing
//     of /memories two levels deep opens 10,100; a write rewrites the trees
//     on its path (here 100 + 100 entries).
//
// tree-KB/write is the size of the tree objects one write hashes, compresses
// and stores.
func BenchmarkList10000(b *testing.B) {
	k := testKey(b, 1)
	const folders, files = 100, 100
	entry := func(stored string) int { return len("100644 ") + len(stored) + 1 + 20 }
	var flat []string
	flatTree := 0
	type folder struct {
		dir    string
		stored string
		kids   []string
	}
	var tree []folder
	topTree := 0
	for i := range folders {
		dir := fmt.Sprintf("/memories/project-%03d", i)
		fs, _ := k.SealName("/memories", fmt.Sprintf("project-%03d", i))
		topTree += entry(fs)
		f := folder{dir: dir, stored: fs}
		for j := range files {
			name := fmt.Sprintf("note-about-something-%04d.md", j)
			s, _ := k.SealName(dir, name)
			f.kids = append(f.kids, s)
			// The flat layout seals the full path as one name, which
			// SealName refuses ('/'); sealing it under the names subkey
			// costs what that layout would.
			ct, _ := k.names.EncryptDeterministically([]byte(dir+"/"+name), nil)
			full := nameEncoding.EncodeToString(ct)
			flat = append(flat, full)
			flatTree += entry(full)
		}
		tree = append(tree, f)
	}
	folderTree := 0
	for _, s := range tree[0].kids {
		folderTree += entry(s)
	}
	b.Run("flat/any-listing", func(b *testing.B) {
		for b.Loop() {
			for _, s := range flat {
				ct, _ := nameEncoding.DecodeString(s)
				sink, _ = k.names.DecryptDeterministically(ct, nil)
			}
		}
		b.ReportMetric(float64(flatTree)/1024, "tree-KB/write")
	})
	b.Run("per-component/one-folder", func(b *testing.B) {
		f := tree[42]
		for b.Loop() {
			k.cache.clear() // the cryptography: a listing of names not opened before
			for _, s := range f.kids {
				sink, _ = k.OpenName(f.dir, s)
			}
		}
		b.ReportMetric(float64(topTree+folderTree)/1024, "tree-KB/write")
	})
	b.Run("per-component/one-folder-again", func(b *testing.B) {
		f := tree[42]
		for b.Loop() {
			for _, s := range f.kids {
				sink, _ = k.OpenName(f.dir, s)
			}
		}
		b.ReportMetric(float64(topTree+folderTree)/1024, "tree-KB/write")
	})
	b.Run("per-component/two-levels", func(b *testing.B) {
		for b.Loop() {
			k.cache.clear()
			for _, f := range tree {
				sink, _ = k.OpenName("/memories", f.stored)
				for _, s := range f.kids {
					sink, _ = k.OpenName(f.dir, s)
				}
			}
		}
		b.ReportMetric(float64(topTree+folderTree)/1024, "tree-KB/write")
	})
}
