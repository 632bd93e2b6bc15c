package tokens

import (
	_ "embed"
	"errors"
	"fmt"
)

// The vocabulary file is generated from tiktoken-go's o200k_base table;
// TestVocabularyFile checks that it still holds exactly that table.
//
//go:generate go test -run ^TestVocabularyFile$ -update
//go:embed o200k_base.vocab
var vocabFile string

// The file is read where it lies in the binary's read-only data: nothing is
// decoded, copied or hashed at load. Layout (integers little-endian uint32):
//
//	magic "o200kv1\n"
//	n, the number of tokens; their ranks are 0..n-1
//	slots, the size of the hash index, a power of two
//	offsets: n+1 integers; the token of rank r is blob[offsets[r]:offsets[r+1]]
//	index: slots integers, open addressing with linear probing from
//	       hash(token) & (slots-1); 0 is an empty slot, else
//	       tag<<rankBits | rank+1, tag being the hash's top tagBits bits
//	blob: the tokens' bytes, in rank order
const (
	vocabMagic = "o200kv1\n"
	rankBits   = 18 // o200k_base has 199,998 ranks: rank+1 fits in 18 bits
	tagBits    = 32 - rankBits
	rankMask   = 1<<rankBits - 1
	headerSize = len(vocabMagic) + 8
)

// vocab is a view of the vocabulary file.
type vocab struct {
	n       int
	mask    uint64
	offsets string
	index   string
	blob    string
}

// parseVocab checks the file's shape and returns a view of it.
func parseVocab(file string) (*vocab, error) {
	if len(file) < headerSize || file[:len(vocabMagic)] != vocabMagic {
		return nil, errors.New("not a vocabulary file")
	}
	n, slots := int(u32(file, len(vocabMagic))), int(u32(file, len(vocabMagic)+4))
	if n >= rankMask || slots < n || slots&(slots-1) != 0 {
		return nil, fmt.Errorf("bad header: %d tokens, %d slots", n, slots)
	}
	offsets := file[headerSize : headerSize+4*(n+1)]
	rest := file[len(offsets)+headerSize:]
	if len(rest) < 4*slots {
		return nil, errors.New("truncated index")
	}
	v := &vocab{n: n, mask: uint64(slots - 1), offsets: offsets, index: rest[:4*slots], blob: rest[4*slots:]}
	if int(u32(offsets, 4*n)) != len(v.blob) {
		return nil, fmt.Errorf("blob is %d bytes, the offsets say %d", len(v.blob), u32(offsets, 4*n))
	}
	return v, nil
}

// rank returns the rank of token b, the lower the earlier it merges.
func (v *vocab) rank(b string) (uint32, bool) {
	h := hash(b)
	tag := uint32(h >> (64 - tagBits))
	for i := h & v.mask; ; i = (i + 1) & v.mask {
		slot := u32(v.index, int(4*i))
		if slot == 0 {
			return 0, false
		}
		if slot>>rankBits == tag {
			r := slot&rankMask - 1
			if v.token(r) == b {
				return r, true
			}
		}
	}
}

// token returns the bytes of rank r.
func (v *vocab) token(r uint32) string {
	return v.blob[u32(v.offsets, int(4*r)):u32(v.offsets, int(4*r+4))]
}

// encodeVocab builds the vocabulary file of tokens, in rank order.
func encodeVocab(tokens []string) []byte {
	slots := 1
	for slots < len(tokens)*4/3 {
		slots *= 2
	}
	blobLen := 0
	for _, t := range tokens {
		blobLen += len(t)
	}
	out := make([]byte, 0, headerSize+4*(len(tokens)+1)+4*slots+blobLen)
	out = append(out, vocabMagic...)
	out = appendU32(out, uint32(len(tokens)))
	out = appendU32(out, uint32(slots))
	off := 0
	for _, t := range tokens {
		out = appendU32(out, uint32(off))
		off += len(t)
	}
	out = appendU32(out, uint32(off))
	index := make([]uint32, slots)
	mask := uint64(slots - 1)
	for r, t := range tokens {
		h := hash(t)
		i := h & mask
		for index[i] != 0 {
			i = (i + 1) & mask
		}
		index[i] = uint32(h>>(64-tagBits))<<rankBits | uint32(r+1)
	}
	for _, slot := range index {
		out = appendU32(out, slot)
	}
	for _, t := range tokens {
		out = append(out, t...)
	}
	return out
}

// hash is 64-bit FNV-1a: fixed, so that the index can be built ahead of
// time, and good enough for short keys.
func hash(b string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(b); i++ {
		h ^= uint64(b[i])
		h *= 1099511628211
	}
	return h
}

func u32(s string, i int) uint32 {
	return uint32(s[i]) | uint32(s[i+1])<<8 | uint32(s[i+2])<<16 | uint32(s[i+3])<<24
}

func appendU32(b []byte, x uint32) []byte {
	return append(b, byte(x), byte(x>>8), byte(x>>16), byte(x>>24))
}
