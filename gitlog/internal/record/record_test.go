package record

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memvault/memvault/gitlog/internal/disk"
)

var testFormat = Format{
	Kind:    "test",
	Version: 2,
	Fields:  map[int][]string{1: nil, 2: {"name", "epoch"}},
	Tags:    []string{"MVTA", "MVTB"},
	MaxBody: 1 << 10,
}

func file(recs ...Record) []byte {
	data := testFormat.Encode("n", "e")
	for _, r := range recs {
		data = Frame(data, r.Tag, r.Body)
	}
	return data
}

func TestParse(t *testing.T) {
	a, b := Record{"MVTA", []byte("one")}, Record{"MVTB", []byte("two two")}
	good := file(a, b)
	head := len(testFormat.Encode("n", "e"))
	big := Frame(testFormat.Encode("n", "e"), "MVTA", make([]byte, 2<<10))
	for _, c := range []struct {
		name    string
		data    []byte
		version int
		recs    int
		whole   int
		damaged bool
		err     error
	}{
		{"empty", nil, 0, 0, 0, false, nil},
		{"a header cut short", good[:10], 0, 0, 0, false, nil},
		{"header fields cut short", good[:head-3], 0, 0, 0, false, nil},
		{"no records", good[:head], 2, 0, head, false, nil},
		{"two records", good, 2, 2, len(good), false, nil},
		{"a torn tail", good[:len(good)-2], 2, 1, len(file(a)), false, nil},
		{"zeros after a power loss", append(bytes.Clone(good), make([]byte, 40)...), 2, 2, len(good), false, nil},
		{"a changed record before a whole one", flip(good, head+FrameLen(1)), 2, 0, head, true, nil},
		{"a record longer than the bound", big, 2, 0, head, false, nil},
		{"a record of an unknown kind", Frame(bytes.Clone(good), "MVTZ", []byte("to come")), 2, 2, len(good), false, ErrNewerFormat},
		{"a newer version", []byte("memvault test v3\nname n\nepoch e\n"), 0, 0, 0, false, ErrNewerFormat},
		{"an older version", []byte("memvault test v1\n"), 1, 0, len("memvault test v1\n"), false, nil},
		{"another kind", []byte("memvault other v2\nname n\nepoch e\n"), 0, 0, 0, false, ErrNotRecordFile},
		{"no header", []byte("MVTA\x00\x00\x00\x00\x00\x00\x00\x00"), 0, 0, 0, false, ErrNotRecordFile},
		{"a field misnamed", []byte("memvault test v2\nnom n\nepoch e\n"), 0, 0, 0, false, ErrNotRecordFile},
	} {
		f, err := testFormat.Parse(c.data)
		if !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
			t.Errorf("%s: Parse error %v, want %v", c.name, err, c.err)
		}
		if f.Version != c.version || len(f.Records) != c.recs || f.Whole != c.whole || f.Damaged != c.damaged {
			t.Errorf("%s: Parse = version %d, %d records, whole %d, damaged %v; want %d, %d, %d, %v", c.name, f.Version, len(f.Records), f.Whole, f.Damaged, c.version, c.recs, c.whole, c.damaged)
		}
	}
	f, _ := testFormat.Parse(good)
	if f.Fields[0] != "n" || f.Fields[1] != "e" || f.Records[1].Tag != "MVTB" || string(f.Records[1].Body) != "two two" {
		t.Errorf("Parse(good) = %+v", f)
	}
}

func flip(data []byte, at int) []byte {
	data = bytes.Clone(data)
	data[at] ^= 1
	return data
}

// A cache steps over damage and unknown kinds to the records that check; a
// file without a header is read from its first byte.
func TestParseSkipDamage(t *testing.T) {
	cache := Format{Kind: "cache", Version: 1, Fields: map[int][]string{0: nil, 1: nil}, Tags: []string{"MVCA"}, Headless: true, SkipDamage: true}
	rec := Frame(nil, "MVCA", []byte("kept"))
	data := append([]byte("junk"), rec...)
	data = Frame(data, "MVZZ", []byte("unknown"))
	data = append(data, flip(rec, 14)...)
	data = append(data, rec...)
	f, err := cache.Parse(data)
	if err != nil || f.Version != 0 || len(f.Records) != 2 {
		t.Errorf("Parse(headless, damaged) = version %d, %d records, %v; want 0, 2, nil", f.Version, len(f.Records), err)
	}
	f, err = cache.Parse(append(cache.Encode(), data...))
	if err != nil || f.Version != 1 || len(f.Records) != 2 {
		t.Errorf("Parse(damaged) = version %d, %d records, %v; want 1, 2, nil", f.Version, len(f.Records), err)
	}
}

// Open makes the file with its header, Append cuts a torn tail before it
// adds, and Replace puts a whole file in place; all through the file layer.
func TestOpenAppendReplace(t *testing.T) {
	var ops []disk.Kind
	d := &disk.Disk{Hook: func(op disk.Op) error {
		ops = append(ops, op.Kind)
		return nil
	}}
	p := filepath.Join(t.TempDir(), "f")
	fl, f, err := testFormat.Open(d, p, []string{"n", "e"}, true)
	if err != nil || f.Version != 2 || f.Whole != len(testFormat.Encode("n", "e")) {
		t.Fatalf("Open(new) = %+v, %v", f, err)
	}
	if len(ops) == 0 {
		t.Errorf("Open made the file without the file layer")
	}
	whole, err := Append(d, fl, int64(f.Whole), []Record{{"MVTA", []byte("one")}}, true)
	fl.Close()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(p)
	os.WriteFile(p, append(raw, "MVTA\x00\x00"...), 0o600) // a torn tail
	fl, f, err = testFormat.Open(d, p, nil, true)
	if err != nil || len(f.Records) != 1 || int64(f.Whole) != whole {
		t.Fatalf("Open(torn tail) = %+v, %v; want one record, whole %d", f, err, whole)
	}
	if _, err := Append(d, fl, int64(f.Whole), []Record{{"MVTB", []byte("two")}}, false); err != nil {
		t.Fatal(err)
	}
	fl.Close()
	got, err := testFormat.Read(p)
	if err != nil || len(got.Records) != 2 || string(got.Records[1].Body) != "two" || got.Whole != len(mustRead(t, p)) {
		t.Errorf("Read after an append over a torn tail = %+v, %v", got, err)
	}
	if err := testFormat.Replace(d, p, []string{"m", "e2"}, []Record{{"MVTB", []byte("only")}}, true); err != nil {
		t.Fatal(err)
	}
	if got, err := testFormat.Read(p); err != nil || got.Fields[0] != "m" || len(got.Records) != 1 {
		t.Errorf("Read after Replace = %+v, %v", got, err)
	}
	if got, err := testFormat.Read(filepath.Join(t.TempDir(), "none")); err != nil || got.Whole != 0 {
		t.Errorf("Read(missing) = %+v, %v; want empty", got, err)
	}
}

func mustRead(t *testing.T, p string) []byte {
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A length that claims more than is there, or more than the bound, is never
// allocated for.
func TestParseAllocatesNothingForALength(t *testing.T) {
	data := append(testFormat.Encode("n", "e"), "MVTA\xff\xff\xff\xff\x00\x00\x00\x00"...)
	if n := testing.AllocsPerRun(10, func() { testFormat.Parse(data) }); n > 4 {
		t.Errorf("Parse of a record claiming 4 GiB: %v allocations", n)
	}
}

// FuzzParse: any bytes parse to a header and whole records or an error,
// never a panic; the records taken frame again to the bytes they came from.
func FuzzParse(f *testing.F) {
	f.Add(file(Record{"MVTA", []byte("one")}, Record{"MVTB", nil}))
	f.Add([]byte("memvault test v1\n"))
	f.Add([]byte("memvault test v9\n"))
	f.Add(file(Record{"MVTA", []byte("one")})[:20])
	f.Fuzz(func(t *testing.T, data []byte) {
		fl, err := testFormat.Parse(data)
		if err != nil && !errors.Is(err, ErrNewerFormat) && !errors.Is(err, ErrNotRecordFile) {
			t.Fatalf("Parse error %v is none of the two", err)
		}
		if fl.Whole > len(data) || fl.Whole > 0 && fl.Whole < fl.Len {
			t.Fatalf("Whole %d, header %d, of %d bytes", fl.Whole, fl.Len, len(data))
		}
		var again []byte
		for _, r := range fl.Records {
			again = Frame(again, r.Tag, r.Body)
		}
		if fl.Whole > 0 && !bytes.Equal(again, data[fl.Len:fl.Whole]) {
			t.Fatalf("the %d records frame again to other bytes", len(fl.Records))
		}
	})
}
