// Package seal hides from a vault's git host what the plain format shows it:
// file and folder names, commit messages and authors, and exact file sizes. It
// does the cryptography of the sealed format and nothing else; vault maps its
// store onto it. Everything here is Tink's AES-SIV (RFC 5297, a deterministic
// authenticated cipher, github.com/tink-crypto/tink-go/v2/daead/subtle) under
// subkeys that HKDF-SHA256 derives from one random 64-byte vault [Key]; no
// construction of our own.
//
// # The key
//
// [NewKey] makes a vault key; [Key.Marshal] and [ParseKey] give its file form,
// the plaintext of .memvault/key: a version line ("memvault-vault-key/v1"),
// then the key in base64. A file of another version is refused, never misread.
// The vault age-encrypts the file to its recipients like any memory file, so
// each tree carries the key its names were sealed with.
//
// # Names
//
// [Key.SealName] seals one path component, with the plaintext path of its
// folder as associated data; [Key.SealPath] seals a memory path component by
// component, so "/memories/clients/acme/notes.md" is stored at memories/A/B/C.
// The same path gives the same stored name on every clone (git's per-file
// history, merges and rename detection work on stored names), and a name
// moved to another folder, made without the key or altered does not open:
// [Key.OpenName] refuses it with an error wrapping [ErrNotSealed], which
// quotes nothing of it. Stored names are lower-case base32 without padding
// (a-z, 2-7): valid git tree entries and file names on Linux, macOS and
// Windows, free of case twins, never dot-files or reserved Windows names.
// A stored name is at most 255 bytes, so a plaintext component is at most
// [MaxName] (143) bytes; a longer one is refused with [ErrNameTooLong], not
// split (the plain format allows 255: the sealed one lowers that limit, and
// the store answers such a path as an invalid one).
//
// Per component, not flat. One flat level of sealed full paths would also hide
// the folder structure, but BenchmarkList10000 (10,000 files in 100 folders of
// 100) shows what it costs: every listing opens all 10,000 names (about 20 ms
// on a loaded 2-core machine, against 0.2 ms for one folder of 100 per
// component, and the same 20 ms as the per-component listing of /memories two
// levels deep), and every write rewrites the one 1.3 MB tree of 10,000 entries
// (17 KB for the two trees on a per-component path), which alone would break
// the write target at 10,000 files. A full path would also have to fit 143
// bytes. So the host sees the shape of the tree (how many folders, how deep,
// how many entries in each) and nothing of what they are called.
//
// A move of a folder re-seals every name below it (each is bound to its
// folder's path); the blobs stay as they are.
//
// A generation's key (format 3, [NewGeneration]) pads each name with NULs to
// 24, 48, 96 or [MaxName] bytes before sealing it, so a stored name's length
// tells the host only which of those four it is within; a key of format 2
// pads nothing, and its vaults' names stay as they were. Names stay
// deterministic: a file deleted and made again, or moved away and back, gets
// the same stored name, which per-file history and merges across clones rely
// on, so the host can follow a path across its life.
//
// # Messages
//
// [Key.SealMessage] turns a commit's real message (subject, trailers) and
// author into a constant [Subject] and one [Trailer] whose value is AES-SIV
// over a random nonce and the fields, padded to 32 bytes (under a
// generation's key, to their Padmé bucket of at least 256 bytes); git's
// author becomes the constant [Author]. The nonce makes two equal commands look different.
// [Key.OpenMessage] costs a few microseconds (BenchmarkMessage), no age
// unwrap; a message that does not open is refused with [ErrBadMessage]. Commit
// and author dates are not sealed.
//
// # Sizes
//
// [Pad] frames plaintext before age encryption (a version byte, the exact
// length, the plaintext, zeros) and rounds the frame up to its Padmé bucket,
// never below [MinPadded] bytes: every file under 1 KiB looks alike, and above
// that a size tells at most its bucket (at most 12% of overhead). [Unpad]
// strips it, with no key, and refuses any frame Pad would not write
// ([ErrBadPad]). A listing prints exact sizes without an age unwrap from a
// size header in front of the age file ([Key.SealSize], [Key.OpenSize],
// [SizeHeaderLen] bytes): AES-SIV over a random nonce and the exact size, bound
// to the age file's header, so the host learns nothing and a header moved to
// another file does not open. The size is not kept in the sealed name, which
// would then change with every edit and break per-file history.
package seal
