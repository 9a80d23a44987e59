package runner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The rank table is the one control message that is not JSON: every rank
// receives it and it grows with the step, and JSON's decoding cost each
// rank milliseconds at 512 ranks. Its binary form is encoded once and
// decodes in microseconds:
//
//	version   1 byte (tableVersion)
//	members   uvarint n, then n members in rank order:
//	  node index  uvarint
//	  node        string
//	  hostname    string
//	  addrs       uvarint k (1 to maxAddrs), k strings
//
// A string is a uvarint, its length plus one, and its bytes. Node names
// and host names repeat from rank to rank: one equal to the previous
// rank's is the uvarint 0 alone. Decoding is strict: the limits of the
// join's checks, nothing left over.
const tableVersion = 1

// encodeTable is the payload of rank 0's msgTable.
func encodeTable(m tableMsg) []byte {
	buf := make([]byte, 0, 64*len(m.Members)+8)
	buf = append(buf, tableVersion)
	buf = binary.AppendUvarint(buf, uint64(len(m.Members)))
	var prev member
	str := func(s, prev string, repeat bool) {
		if repeat && s == prev {
			buf = binary.AppendUvarint(buf, 0)
			return
		}
		buf = binary.AppendUvarint(buf, uint64(len(s))+1)
		buf = append(buf, s...)
	}
	for i, mb := range m.Members {
		buf = binary.AppendUvarint(buf, uint64(max(mb.NodeIndex, 0)))
		str(mb.Node, prev.Node, i > 0)
		str(mb.Hostname, prev.Hostname, i > 0)
		buf = binary.AppendUvarint(buf, uint64(len(mb.Addrs)))
		for _, a := range mb.Addrs {
			str(a, "", false)
		}
		prev = mb
	}
	return buf
}

// errTable is what any malformed table decodes to, with the reason.
var errTable = errors.New("table")

// decodeTable reads encodeTable's payload; size bounds the members (the
// step's size: anything else is refused by check anyway, and must not be
// allocated first).
func decodeTable(p []byte, size int) (tableMsg, error) {
	d := tableDecoder{p: p, all: string(p)}
	if v := d.byte(); d.err == nil && v != tableVersion {
		return tableMsg{}, fmt.Errorf("%w: version %d, want %d", errTable, v, tableVersion)
	}
	n := d.uvarint(uint64(size))
	if d.err != nil {
		return tableMsg{}, d.err
	}
	m := tableMsg{Members: make([]member, n)}
	// Every rank's addresses in one array (most have one or two), each
	// rank's a slice of it, capped: allocations, not the table's size,
	// were its cost.
	pool := make([]string, 0, 2*n)
	var prev member
	for i := range m.Members {
		mb := &m.Members[i]
		mb.Rank = i
		mb.NodeIndex = int(d.uvarint(uint64(max(size, 1))))
		mb.Node = d.str(maxTextLen, prev.Node, i > 0)
		mb.Hostname = d.str(maxTextLen, prev.Hostname, i > 0)
		k := d.uvarint(maxAddrs)
		if d.err == nil && k == 0 {
			d.fail("rank %d has no address", i)
		}
		start := len(pool)
		for j := uint64(0); j < k && d.err == nil; j++ {
			pool = append(pool, d.str(maxAddrLen, "", false))
		}
		mb.Addrs = pool[start:len(pool):len(pool)]
		if d.err != nil {
			return tableMsg{}, d.err
		}
		prev = *mb
	}
	if len(d.p) > 0 {
		return tableMsg{}, fmt.Errorf("%w: %d bytes after the last member", errTable, len(d.p))
	}
	return m, nil
}

// tableDecoder reads p from the front; the first error sticks. Its
// strings are slices of all, the payload as one string: one allocation
// for the table's hundreds of names and addresses.
type tableDecoder struct {
	p   []byte
	all string
	err error
}

func (d *tableDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", errTable, fmt.Sprintf(format, args...))
	}
}

func (d *tableDecoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.p) == 0 {
		d.err = fmt.Errorf("%w: %w", errTable, io.ErrUnexpectedEOF)
		return 0
	}
	b := d.p[0]
	d.p = d.p[1:]
	return b
}

// uvarint reads a number of at most limit.
func (d *tableDecoder) uvarint(limit uint64) uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.p)
	switch {
	case n == 0:
		d.err = fmt.Errorf("%w: %w", errTable, io.ErrUnexpectedEOF)
		return 0
	case n < 0:
		d.fail("bad number")
		return 0
	case v > limit:
		d.fail("%d is over the limit of %d", v, limit)
		return 0
	}
	d.p = d.p[n:]
	return v
}

// str reads a string of at most limit bytes; with repeat, the uvarint 0
// stands for prev.
func (d *tableDecoder) str(limit int, prev string, repeat bool) string {
	n := d.uvarint(uint64(limit) + 1)
	if d.err != nil {
		return ""
	}
	if n == 0 {
		if !repeat {
			d.fail("a repeated string where there is nothing to repeat")
		}
		return prev
	}
	n--
	if uint64(len(d.p)) < n {
		d.err = fmt.Errorf("%w: %w", errTable, io.ErrUnexpectedEOF)
		return ""
	}
	at := len(d.all) - len(d.p)
	d.p = d.p[n:]
	return d.all[at : at+int(n)]
}
