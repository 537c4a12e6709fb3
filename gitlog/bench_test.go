package gitlog

import (
	gitobject "github.com/memvault/memvault/gitlog/internal/object"

	"bytes"
	"compress/zlib"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// BenchmarkCommit is one durable commit of a 1.2 KB blob at depth three in a tree
// of 100 files, without encryption: the floor under a vault write.
func BenchmarkCommit(b *testing.B) {
	r, err := Init(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	data := make([]byte, 1200)
	for i := range 100 {
		commitB(b, r, fmt.Sprintf("memories/d000/f%03d", i), data)
	}
	syncFS(r.dir) // let the seeding's writeback finish before anything is timed
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		data[0] = byte(i)
		commitB(b, r, fmt.Sprintf("memories/d000/f%03d", i%100), data)
	}
}

// BenchmarkCommitReflog is BenchmarkCommit with and without the reflog's
// record of each move of main, in one run: what the record costs a commit.
func BenchmarkCommitReflog(b *testing.B) {
	for _, off := range []bool{false, true} {
		name := "reflog"
		if off {
			name = "no-reflog"
		}
		b.Run(name, func(b *testing.B) {
			skipReflog.Store(off)
			defer skipReflog.Store(false)
			BenchmarkCommit(b)
		})
	}
}

func commitB(b *testing.B, r *Repo, p string, data []byte) {
	wl, err := r.Lock(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	defer wl.Unlock()
	head, _ := r.Head()
	if _, err := wl.Commit(context.Background(), head, []Change{{Op: Put, Path: p, Data: data}}, CommitInfo{Message: "m\n"}); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkInflateCommit inflates a commit-sized object whose bytes deflate
// poorly (a signature and a sealed trailer are base64 of random bytes), as
// the pack writer deflates it and as it would be stored: what a pack's reader
// pays for each such object it inflates.
func BenchmarkInflateCommit(b *testing.B) {
	raw := make([]byte, 480)
	rand.Read(raw)
	data := []byte(base64.StdEncoding.EncodeToString(raw)) // 640 bytes
	for _, tc := range []struct {
		name string
		pool *sync.Pool
	}{{"deflated", &gitobject.Writers}, {"stored", &gitobject.Stored}} {
		var z bytes.Buffer
		zw := tc.pool.Get().(*zlib.Writer)
		zw.Reset(&z)
		zw.Write(data)
		zw.Close()
		tc.pool.Put(zw)
		out := make([]byte, len(data))
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := gitobject.InflateInto(z.Bytes(), out, true); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(z.Len())/float64(len(data)), "packed/raw")
		})
	}
}

// BenchmarkReadBlob reads packed blobs of the sizes a vault holds through
// Repo.ReadBlob, Repo.ObjectSize and the stream gc and pushes read: sealed
// memories of 1.2 KB; blobs above 16 KiB, which go-git's storage reads by
// reopening their pack; one above the size read as a stream. Each read takes
// the next of more distinct blobs than the 8 MiB of go-git's object cache
// holds, as a view below vault's cache of plaintext reads them: cold.
//
//	go test ./gitlog -run '^$' -bench BenchmarkReadBlob -count 5
func BenchmarkReadBlob(b *testing.B) {
	r, err := Init(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	sizes := []struct {
		name  string
		n     int
		count int
	}{{"1.2KB", 1200, 8000}, {"40KiB", 40 << 10, 300}, {"large", largeObject + 4096, 1}}
	var cs []Change
	hs := map[string][]Hash{}
	for _, s := range sizes {
		for i := range s.count {
			data := make([]byte, s.n)
			rand.Read(data) // ciphertext: it neither deflates nor deltas
			cs = append(cs, Change{Op: Put, Path: fmt.Sprintf("memories/%s/%04d", s.name, i), Data: data})
			hs[s.name] = append(hs[s.name], computeHash(plumbing.BlobObject, data))
		}
	}
	commit(b, r, cs...)
	if _, err := r.Pack(context.Background()); err != nil {
		b.Fatal(err)
	}
	for _, s := range sizes {
		blobs := hs[s.name]
		b.Run("ReadBlob/"+s.name, func(b *testing.B) {
			b.SetBytes(int64(s.n))
			i := 0
			for b.Loop() {
				h := blobs[i%len(blobs)]
				i++
				if data, err := r.ReadBlob(h); err != nil || len(data) != s.n {
					b.Fatalf("ReadBlob(%s) = %d bytes, %v; want %d", h, len(data), err, s.n)
				}
			}
		})
		b.Run("ObjectSize/"+s.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				h := blobs[i%len(blobs)]
				i++
				if n, err := r.ObjectSize(h); err != nil || n != int64(s.n) {
					b.Fatalf("ObjectSize(%s) = %d, %v; want %d", h, n, err, s.n)
				}
			}
		})
		b.Run("Stream/"+s.name, func(b *testing.B) {
			b.SetBytes(int64(s.n))
			i := 0
			for b.Loop() {
				h := blobs[i%len(blobs)]
				i++
				_, _, rd, err := r.openObject(plumbing.BlobObject, h)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, rd)
				rd.Close()
				if err != nil || n != int64(s.n) {
					b.Fatalf("stream of %s = %d bytes, %v; want %d", h, n, err, s.n)
				}
			}
		})
	}
}
